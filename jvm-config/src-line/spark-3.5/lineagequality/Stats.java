package lineagequality;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CreateNamedStruct;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Greatest;
import org.apache.spark.sql.catalyst.expressions.Least;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.types.DataType;

import scala.collection.IndexedSeq;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * A column's statistics in one aggregate (StatsParts, shared by both lines): here only the
 * overrides and constructors whose signatures name Scala's collection types. The twin of
 * src-line/spark-4's Stats: keep the two the same but for those types.
 */
final class Stats extends StatsParts {
  private static final long serialVersionUID = 1L;

  Stats(Expression value, DataType type, List<String> stats, boolean nullOnDivideByZero) {
    super(value, type, stats, nullOnDivideByZero);
  }

  private static <T> Seq<T> seq(List<T> items) {
    return JavaConverters.asScalaBuffer(items).toSeq();
  }

  @Override
  Expression least(Expression a, Expression b) {
    return new Least(seq(List.of(a, b)));
  }

  @Override
  Expression greatest(Expression a, Expression b) {
    return new Greatest(seq(List.of(a, b)));
  }

  @Override
  Expression struct(List<String> names, List<Expression> values) {
    final List<Expression> pairs = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      pairs.add(Literal.create(names.get(i), org.apache.spark.sql.types.DataTypes.StringType));
      pairs.add(values.get(i));
    }
    return new CreateNamedStruct(seq(pairs));
  }

  @Override
  public Seq<Expression> children() {
    return seq(List.of(value));
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return new Stats(children.apply(0), type, stats, nullOnDivideByZero);
  }

  @Override
  public Seq<AttributeReference> aggBufferAttributes() {
    return seq(bufferList());
  }

  @Override
  public Seq<Expression> initialValues() {
    return seq(initialList());
  }

  @Override
  public Seq<Expression> updateExpressions() {
    return seq(updateList());
  }

  @Override
  public Seq<Expression> mergeExpressions() {
    return seq(mergeList(new ArrayList<Expression>(
        JavaConverters.seqAsJavaList(inputAggBufferAttributes()))));
  }

  @Override
  public Expression evaluateExpression() {
    return evaluation();
  }
}
