package lineagequality;

import java.util.List;
import java.util.Map;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * A column's statistics (avg, sum, stddev, min, max) as one aggregate with shared buffers (see
 * lineage_quality.engine.column_stats and Stats): a struct, field i the value of stats[i].
 */
public final class ColumnStats {
  private ColumnStats() {}

  private static final Map<String, DataType> TYPES =
      Map.of(
          "tinyint", DataTypes.ByteType,
          "smallint", DataTypes.ShortType,
          "int", DataTypes.IntegerType,
          "bigint", DataTypes.LongType,
          "float", DataTypes.FloatType,
          "double", DataTypes.DoubleType);

  /** `stats` of `value`, a column of `typeName` (its simpleString: int, double, ...). */
  public static Column stats(Column value, String typeName, List<String> stats) {
    final DataType type = TYPES.get(typeName);
    if (type == null) {
      throw new IllegalArgumentException("not a plain numeric type: " + typeName);
    }
    return Line.column(
        new Stats(Line.converted(value), type, stats, Stats.defaultNullOnDivideByZero())
            .toAggregateExpression());
  }
}
