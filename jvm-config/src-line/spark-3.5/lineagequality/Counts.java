package lineagequality;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CreateArray;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;

import scala.collection.IndexedSeq;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * Several row counts in one aggregate (see lineage_quality.engine.row_gates): element i of the
 * result counts the rows where conditions[i] is true (null counts as false), as
 * `count(CASE WHEN c THEN 1 END)` would. One aggregate in the plan instead of one per count:
 * Catalyst analyzes, optimizes and generates code for one node, and a FILTER on it (a column's
 * row gate) skips all its counts with one test. The twin of src-line/spark-4's Counts (only
 * Scala's collection types differ): keep the two files the same otherwise.
 */
final class Counts extends DeclarativeAggregate {
  private static final long serialVersionUID = 1L;
  private static final Literal ZERO = Literal.create(0L, DataTypes.LongType);
  private static final Literal ONE = Literal.create(1L, DataTypes.LongType);

  private final List<Expression> conditions;
  private final List<AttributeReference> buffers;

  Counts(List<Expression> conditions) {
    if (conditions.isEmpty()) {
      throw new IllegalArgumentException("no conditions to count");
    }
    this.conditions = new ArrayList<>(conditions);
    this.buffers = new ArrayList<>();
    for (int i = 0; i < conditions.size(); i++) {
      buffers.add(
          new AttributeReference(
              "count" + i,
              DataTypes.LongType,
              false,
              Metadata.empty(),
              NamedExpression$.MODULE$.newExprId(),
              seq(new ArrayList<String>())));
    }
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
  public boolean nullable() {
    return false;
  }

  @Override
  public DataType dataType() {
    return DataTypes.createArrayType(DataTypes.LongType, false);
  }

  @Override
  public String prettyName() {
    return "lq_counts";
  }

  @Override
  public Seq<AttributeReference> aggBufferAttributes() {
    return seq(buffers);
  }

  @Override
  public Seq<Expression> initialValues() {
    List<Expression> out = new ArrayList<>();
    for (int i = 0; i < buffers.size(); i++) {
      out.add(ZERO);
    }
    return seq(out);
  }

  @Override
  public Seq<Expression> updateExpressions() {
    List<Expression> out = new ArrayList<>();
    for (int i = 0; i < buffers.size(); i++) {
      out.add(new Add(buffers.get(i), new If(conditions.get(i), ONE, ZERO)));
    }
    return seq(out);
  }

  @Override
  public Seq<Expression> mergeExpressions() {
    List<Expression> out = new ArrayList<>();
    for (int i = 0; i < buffers.size(); i++) {
      out.add(new Add(buffers.get(i), inputAggBufferAttributes().apply(i)));
    }
    return seq(out);
  }

  @Override
  public Expression evaluateExpression() {
    return new CreateArray(seq(new ArrayList<Expression>(buffers)), false);
  }

  // As a case class would: TreeNode copies a node by its one constructor argument.
  @Override
  public int productArity() {
    return 1;
  }

  @Override
  public Object productElement(int n) {
    if (n != 0) {
      throw new IndexOutOfBoundsException(String.valueOf(n));
    }
    return conditions;
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof Counts;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Counts && conditions.equals(((Counts) other).conditions);
  }

  @Override
  public int hashCode() {
    return Objects.hash(Counts.class, conditions);
  }
}
