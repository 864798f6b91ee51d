package lineagequality;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CreateArray;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;

import scala.collection.JavaConverters;

/**
 * Several row counts in one aggregate (see lineage_quality.engine.row_gates): element i of the
 * result counts the rows where conditions[i] is true (null counts as false), as
 * `count(CASE WHEN c THEN 1 END)` would. One aggregate in the plan instead of one per count:
 * Catalyst analyzes, optimizes and generates code for one node, and a FILTER on it (a column's
 * row gate) skips all its counts with one test.
 *
 * <p>One class for both Spark lines: LineAggregate (src-line/spark-*) hands its lists to
 * Catalyst in that line's Scala collections.
 */
final class Counts extends LineAggregate {
  private static final long serialVersionUID = 1L;
  private static final Literal ZERO = Literal.create(0L, DataTypes.LongType);
  private static final Literal ONE = Literal.create(1L, DataTypes.LongType);

  final List<Expression> conditions;
  final List<AttributeReference> buffers;

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
              JavaConverters.asScalaBuffer(new ArrayList<String>()).toList()));
    }
  }

  @Override
  List<?> caseFields() {
    return List.of(conditions);
  }

  @Override
  List<Expression> childList() {
    return conditions;
  }

  @Override
  Expression withChildren(List<Expression> children) {
    return new Counts(children);
  }

  @Override
  List<AttributeReference> bufferList() {
    return buffers;
  }

  /** Each count's start: 0. */
  @Override
  List<Expression> initialList() {
    List<Expression> out = new ArrayList<>();
    for (int i = 0; i < buffers.size(); i++) {
      out.add(ZERO);
    }
    return out;
  }

  /** Each count plus one where its condition holds. */
  @Override
  List<Expression> updateList() {
    List<Expression> out = new ArrayList<>();
    for (int i = 0; i < buffers.size(); i++) {
      out.add(new Add(buffers.get(i), new If(conditions.get(i), ONE, ZERO)));
    }
    return out;
  }

  /** Each count plus the other buffer's (`inputs`: this aggregate's input buffer attributes). */
  @Override
  List<Expression> mergeList(List<Expression> inputs) {
    List<Expression> out = new ArrayList<>();
    for (int i = 0; i < buffers.size(); i++) {
      out.add(new Add(buffers.get(i), inputs.get(i)));
    }
    return out;
  }

  @Override
  public Expression evaluateExpression() {
    return new CreateArray(Line.seq(new ArrayList<Expression>(buffers)), false);
  }

  @Override
  public DataType dataType() {
    return DataTypes.createArrayType(DataTypes.LongType, false);
  }

  @Override
  public String prettyName() {
    return "lq_counts";
  }
}
