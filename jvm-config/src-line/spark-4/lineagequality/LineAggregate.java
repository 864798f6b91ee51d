package lineagequality;

import java.util.ArrayList;

import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;

import scala.collection.JavaConverters;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;

/**
 * The overrides of the engine's declarative aggregates (Stats, Counts) whose signatures name
 * Scala's collection types, each made from the Java list AggregateParts declares. The twin of
 * src-line/spark-3.5's LineAggregate: keep the two the same but for those types.
 */
abstract class LineAggregate extends AggregateParts {
  private static final long serialVersionUID = 1L;

  @Override
  public Seq<Expression> children() {
    return Line.seq(childList());
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return withChildren(JavaConverters.seqAsJavaList(children));
  }

  @Override
  public Seq<AttributeReference> aggBufferAttributes() {
    return Line.seq(bufferList());
  }

  @Override
  public Seq<Expression> initialValues() {
    return Line.seq(initialList());
  }

  @Override
  public Seq<Expression> updateExpressions() {
    return Line.seq(updateList());
  }

  @Override
  public Seq<Expression> mergeExpressions() {
    return Line.seq(mergeList(new ArrayList<Expression>(
        JavaConverters.seqAsJavaList(inputAggBufferAttributes()))));
  }
}
