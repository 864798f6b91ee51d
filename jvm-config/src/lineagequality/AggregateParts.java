package lineagequality;

import java.util.List;
import java.util.Objects;

import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate;

/**
 * What the engine's declarative aggregates (Stats, Counts) share on both Spark lines: their
 * children, buffers and expressions as Java lists, which LineAggregate (src-line/spark-*) hands
 * to Catalyst in its line's Scala collections, and the contract a case class would have.
 * Hierarchy: DeclarativeAggregate, AggregateParts, LineAggregate, then Stats or Counts.
 */
abstract class AggregateParts extends DeclarativeAggregate {
  private static final long serialVersionUID = 1L;

  /** The constructor's arguments in order: what a case class's product and equality read. */
  abstract List<?> caseFields();

  abstract List<Expression> childList();

  /** This aggregate with `children` in place of childList() (TreeNode's copy on a rewrite). */
  abstract Expression withChildren(List<Expression> children);

  abstract List<AttributeReference> bufferList();

  abstract List<Expression> initialList();

  abstract List<Expression> updateList();

  /** Each buffer merged with the other side's (`inputs`: this aggregate's input buffers). */
  abstract List<Expression> mergeList(List<Expression> inputs);

  @Override
  public boolean nullable() {
    return false;
  }

  // As a case class would: TreeNode copies a node by its constructor arguments.
  @Override
  public int productArity() {
    return caseFields().size();
  }

  @Override
  public Object productElement(int n) {
    final List<?> fields = caseFields();
    if (n < 0 || n >= fields.size()) {
      throw new IndexOutOfBoundsException(String.valueOf(n));
    }
    return fields.get(n);
  }

  // Equal only to the same class (Stats and Counts are final), as a case class is.
  @Override
  public boolean canEqual(Object other) {
    return other != null && other.getClass() == getClass();
  }

  @Override
  public boolean equals(Object other) {
    return canEqual(other) && caseFields().equals(((AggregateParts) other).caseFields());
  }

  @Override
  public int hashCode() {
    return Objects.hash(getClass(), caseFields());
  }
}
