package lineagequality;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;

import scala.Option;

/**
 * Aggregates that skip a row on one boolean test (see lineage_quality.engine.row_gates): the
 * aggregate `FILTER (WHERE gate)`, which Spark's generated code checks before it calls the
 * aggregate's update, so a row that fails none of a column's rules costs one branch per rule.
 */
public final class RowGates {
  private RowGates() {}

  /** One aggregate for several counts (Counts): element i, the rows where conditions[i] holds. */
  public static Column counts(List<Column> conditions) {
    return Line.column(new Counts(expressions(conditions)).toAggregateExpression());
  }

  /** `counts` over only the rows where `gate` is true (null counts as false). */
  public static Column counts(List<Column> conditions, Column gate) {
    return Line.column(
        new Counts(expressions(conditions))
            .toAggregateExpression(false, Option.apply(Line.converted(gate))));
  }

  private static List<Expression> expressions(List<Column> columns) {
    final List<Expression> out = new ArrayList<>();
    for (Column c : columns) {
      out.add(Line.converted(c));
    }
    return out;
  }

  /** `aggregate` counting only the rows where `gate` is true (null counts as false). */
  public static Column filtered(Column aggregate, Column gate) {
    final Expression found = Line.converted(aggregate);
    final Expression condition = Line.converted(gate);
    if (found instanceof AggregateExpression) {
      final AggregateExpression agg = (AggregateExpression) found;
      if (agg.isDistinct() || agg.filter().isDefined()) {
        throw new IllegalArgumentException("already distinct or filtered: " + found);
      }
      return Line.column(
          agg.copy(
              agg.aggregateFunction(), agg.mode(), false, Option.apply(condition), agg.resultId()));
    }
    // Spark 4 resolves functions in the analyzer: the aggregate is still a call by name here.
    final Expression call = Line.filteredCall(found, condition);
    if (call == null) {
      throw new IllegalArgumentException("not an aggregate: " + found);
    }
    return Line.column(call);
  }
}
