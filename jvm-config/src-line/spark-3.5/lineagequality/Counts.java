package lineagequality;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CreateArray;
import org.apache.spark.sql.catalyst.expressions.Expression;

import scala.collection.IndexedSeq;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * Several row counts in one aggregate (CountsParts, shared by both lines): here only the
 * overrides whose signatures name Scala's collection types. The twin of src-line/spark-4's
 * Counts: keep the two the same but for those types.
 */
final class Counts extends CountsParts {
  private static final long serialVersionUID = 1L;

  Counts(List<Expression> conditions) {
    super(conditions);
  }

  private static <T> Seq<T> seq(List<T> items) {
    return JavaConverters.asScalaBuffer(items).toSeq();
  }

  @Override
  public Seq<Expression> children() {
    return seq(conditions);
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return new Counts(JavaConverters.seqAsJavaList(children));
  }

  @Override
  public Seq<AttributeReference> aggBufferAttributes() {
    return seq(buffers);
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
    return new CreateArray(seq(new ArrayList<Expression>(buffers)), false);
  }
}
