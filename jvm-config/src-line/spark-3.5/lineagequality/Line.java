package lineagequality;

import java.io.IOException;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFooterReader;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;

import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * What Spark 3.5 (Scala 2.12) spells differently from Spark 4: the engine's other sources are
 * one tree, compiled against each line with this file and LineAggregate or their twins in
 * src-line/spark-4 (the Makefile picks them by SPARK=). Keep the two files' methods the same.
 */
final class Line {
  private Line() {}

  /** A Scala Seq of `items`, as this line's Catalyst constructors and overrides take it. */
  static <T> Seq<T> seq(List<T> items) {
    return JavaConverters.asScalaBuffer(items).toSeq();
  }

  /** A Column around a Catalyst expression. */
  static Column column(Expression expression) {
    return new Column(expression);
  }

  /** The Catalyst expression of a Column. */
  static Expression expression(Column column) {
    return column.expr();
  }

  /** The Catalyst expression of a Column, resolved as far as the Column API resolves it. */
  static Expression converted(Column column) {
    return column.expr();
  }

  /**
   * A call by name to an aggregate, made to count only the rows where `condition` holds; null
   * when `found` is no such call. Spark 3.5's functions build resolved aggregates: always null.
   */
  static Expression filteredCall(Expression found, Expression condition) {
    return null;
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
        true);
  }

  /**
   * A Parquet file's footer without its row groups, read as Spark's schema inference reads it
   * (ParquetFileFormat.readParquetFootersInParallel).
   */
  static ParquetMetadata footer(Configuration conf, FileStatus file) throws IOException {
    return ParquetFooterReader.readFooter(conf, file, ParquetMetadataConverter.SKIP_ROW_GROUPS);
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
        conf.legacyParquetNanosAsLong());
  }
}
