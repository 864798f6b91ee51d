package lineagequality;

import java.io.IOException;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFooterReader;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;

import scala.Option;
import scala.collection.JavaConverters;
import scala.collection.immutable.Seq;

/**
 * What Spark 4 (Scala 2.13) spells differently from Spark 3.5: a Column holds a ColumnNode, not
 * an Expression (classic's ExpressionUtils converts), and StaticInvoke takes a ScalarFunction.
 * The twin of src-line/spark-3.5's Line: keep the two files' methods the same.
 */
final class Line {
  private Line() {}

  /** A Scala Seq of `items`, as this line's Catalyst constructors and overrides take it. */
  static <T> Seq<T> seq(List<T> items) {
    return JavaConverters.asScalaBuffer(items).toList();
  }

  /** A Column around a Catalyst expression. */
  static Column column(Expression expression) {
    return ExpressionUtils.column(expression);
  }

  /** The Catalyst expression of a Column. */
  static Expression expression(Column column) {
    return ExpressionUtils.expression(column);
  }

  /**
   * The Catalyst expression of a Column as the session converts it (functions become calls by
   * name, UnresolvedFunction), not the lazy wrapper that `expression` may return.
   */
  static Expression converted(Column column) {
    return SparkSession.active().expression(column);
  }

  /**
   * A call by name to an aggregate, made to count only the rows where `condition` holds (the
   * analyzer refuses a FILTER on a function that is no aggregate); null when `found` is no call
   * by name, and an error when it is DISTINCT or filtered already.
   */
  static Expression filteredCall(Expression found, Expression condition) {
    if (!(found instanceof UnresolvedFunction)) {
      return null;
    }
    final UnresolvedFunction call = (UnresolvedFunction) found;
    if (call.isDistinct() || call.filter().isDefined()) {
      throw new IllegalArgumentException("already distinct or filtered: " + found);
    }
    return call.copy(
        call.nameParts(),
        call.arguments(),
        false,
        Option.apply(condition),
        call.ignoreNulls(),
        call.orderingWithinGroup(),
        call.isInternal());
  }

  /** `owner.method(arguments...)` in generated code, without input casts; null in, null out. */
  static Expression staticInvoke(
      Class<?> owner, DataType type, String method, List<Expression> arguments,
      List<AbstractDataType> noCasts) {
    return new StaticInvoke(
        owner,
        type,
        method,
        seq(arguments),
        seq(noCasts),
        true,
        true,
        true,
        Option.empty());
  }

  /**
   * A Parquet file's footer without its row groups, read as Spark's schema inference reads it
   * (ParquetFileFormat.readParquetFootersInParallel).
   */
  static ParquetMetadata footer(Configuration conf, FileStatus file) throws IOException {
    return ParquetFooterReader.readFooter(
        HadoopInputFile.fromStatus(file, conf), ParquetMetadataConverter.SKIP_ROW_GROUPS);
  }

  /**
   * The converter Spark's schema inference makes of a footer's Parquet schema (the one in
   * ParquetFileFormat.mergeSchemasInParallel): these settings of the session, the constructor's
   * defaults for the rest.
   */
  static ParquetToSparkSchemaConverter schemaConverter(SQLConf conf) {
    return new ParquetToSparkSchemaConverter(
        conf.isParquetBinaryAsString(),
        conf.isParquetINT96AsTimestamp(),
        ParquetToSparkSchemaConverter$.MODULE$.$lessinit$greater$default$3(),
        conf.parquetInferTimestampNTZEnabled(),
        conf.legacyParquetNanosAsLong(),
        ParquetToSparkSchemaConverter$.MODULE$.$lessinit$greater$default$6(),
        ParquetToSparkSchemaConverter$.MODULE$.$lessinit$greater$default$7(),
        conf.parquetReaderRespectUnknownTypeAnnotation());
  }
}
