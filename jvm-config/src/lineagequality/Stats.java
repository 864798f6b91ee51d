package lineagequality;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.CreateNamedStruct;
import org.apache.spark.sql.catalyst.expressions.Divide;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Greatest;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.KnownNotNull;
import org.apache.spark.sql.catalyst.expressions.Least;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.Sqrt;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;

import scala.Option;
import scala.collection.JavaConverters;

/**
 * A column's statistics in one aggregate (see lineage_quality.engine.column_stats): field i of
 * the result struct is stats[i] of the column (avg, sum, stddev, min or max), the value Spark's
 * own avg, sum, stddev_samp, min or max gives, from buffers the statistics share: one count of
 * the non-null values, one double sum for avg and a floating sum, one Welford mean and M2.
 *
 * <p>Each buffer's update and merge is Spark's own formula (Average, Sum, CentralMomentAgg,
 * Least / Greatest), in the same order of operations, so the values are the same to the bit:
 * <ul>
 *   <li>avg's sum starts at 0.0 and adds each non-null value; Sum's starts at null, then 0.0 plus
 *       the first value: the same additions, and a sum that starts at +0.0 never becomes -0.0,
 *       so Average's `+ 0.0` for a null changes nothing either;
 *   <li>Welford's n is the count as a double (exact below 2^53 values);
 *   <li>min and max start at a value every other value replaces or equals (NaN is Spark's
 *       largest double), where Spark's start at null; an empty input is null through the count.
 * </ul>
 * One class for both Spark lines: LineAggregate (src-line/spark-*) hands its lists to Catalyst
 * in that line's Scala collections.
 */
final class Stats extends LineAggregate {
  private static final long serialVersionUID = 1L;
  static final List<String> KINDS = List.of("avg", "sum", "stddev", "min", "max");

  final Expression value;
  final DataType type; // the column's, as the caller read it from the schema
  final List<String> stats;
  final boolean nullOnDivideByZero; // StddevSamp's: null (not NaN) for one value
  private final Map<String, AttributeReference> buffers = new LinkedHashMap<>();

  Stats(Expression value, DataType type, List<String> stats, boolean nullOnDivideByZero) {
    if (stats.isEmpty()) {
      throw new IllegalArgumentException("no statistics");
    }
    final boolean integral = integral(type);
    if (!integral && !floating(type)) {
      throw new IllegalArgumentException("not a plain numeric type: " + type);
    }
    for (String s : stats) {
      if (!KINDS.contains(s)) {
        throw new IllegalArgumentException("not a statistic here: " + s);
      }
      if (s.equals("sum") && type.equals(DataTypes.LongType)) {
        // a bigint sum is taken in decimal (it could wrap as a long): not here
        throw new IllegalArgumentException("a bigint sum");
      }
    }
    this.value = value;
    this.type = type;
    this.stats = new ArrayList<>(stats);
    this.nullOnDivideByZero = nullOnDivideByZero;
    buffer("count", DataTypes.LongType);
    if (stats.contains("avg") || (stats.contains("sum") && !integral)) {
      buffer("sumDouble", DataTypes.DoubleType);
    }
    if (stats.contains("sum") && integral) {
      buffer("sumLong", DataTypes.LongType);
    }
    if (stats.contains("stddev")) {
      buffer("mean", DataTypes.DoubleType);
      buffer("m2", DataTypes.DoubleType);
    }
    if (stats.contains("min")) {
      buffer("min", type);
    }
    if (stats.contains("max")) {
      buffer("max", type);
    }
  }

  /** The default StddevSamp takes: null for one value, unless the legacy setting says NaN. */
  static boolean defaultNullOnDivideByZero() {
    return !SQLConf.get().legacyStatisticalAggregate();
  }

  private static boolean integral(DataType type) {
    return type.equals(DataTypes.ByteType)
        || type.equals(DataTypes.ShortType)
        || type.equals(DataTypes.IntegerType)
        || type.equals(DataTypes.LongType);
  }

  private static boolean floating(DataType type) {
    return type.equals(DataTypes.FloatType) || type.equals(DataTypes.DoubleType);
  }

  private void buffer(String name, DataType bufferType) {
    buffers.put(
        name,
        new AttributeReference(
            name,
            bufferType,
            false,
            Metadata.empty(),
            NamedExpression$.MODULE$.newExprId(),
            JavaConverters.asScalaBuffer(new ArrayList<String>()).toList()));
  }

  /** Least / Greatest of two: Min's and Max's update. */
  private static Expression least(Expression a, Expression b) {
    return new Least(Line.seq(List.of(a, b)));
  }

  private static Expression greatest(Expression a, Expression b) {
    return new Greatest(Line.seq(List.of(a, b)));
  }

  /** named_struct(names[i], values[i], ...). */
  private static Expression struct(List<String> names, List<Expression> values) {
    final List<Expression> pairs = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      pairs.add(Literal.create(names.get(i), DataTypes.StringType));
      pairs.add(values.get(i));
    }
    return new CreateNamedStruct(Line.seq(pairs));
  }

  @Override
  List<?> caseFields() {
    return Arrays.asList(value, type, stats, nullOnDivideByZero);
  }

  @Override
  List<Expression> childList() {
    return List.of(value);
  }

  @Override
  Expression withChildren(List<Expression> children) {
    return new Stats(children.get(0), type, stats, nullOnDivideByZero);
  }

  @Override
  List<AttributeReference> bufferList() {
    return new ArrayList<>(buffers.values());
  }

  private static Expression cast(Expression e, DataType to) {
    return new Cast(e, to, Option.<String>empty());
  }

  private static Literal lit(Object v, DataType t) {
    return Literal.create(v, t);
  }

  /**
   * The start each statistic's value is replaced by (or equal to) on the first value: the
   * highest value of the type for min, the lowest for max.
   */
  private Literal bound(boolean highest) {
    // NaN orders above every double and float in Spark (SQLOrderingUtil)
    if (type.equals(DataTypes.DoubleType)) {
      return lit(highest ? Double.NaN : Double.NEGATIVE_INFINITY, type);
    }
    if (type.equals(DataTypes.FloatType)) {
      return lit(highest ? Float.NaN : Float.NEGATIVE_INFINITY, type);
    }
    if (type.equals(DataTypes.LongType)) {
      return lit(highest ? Long.MAX_VALUE : Long.MIN_VALUE, type);
    }
    if (type.equals(DataTypes.IntegerType)) {
      return lit(highest ? Integer.MAX_VALUE : Integer.MIN_VALUE, type);
    }
    if (type.equals(DataTypes.ShortType)) {
      return lit(highest ? Short.MAX_VALUE : Short.MIN_VALUE, type);
    }
    return lit(highest ? Byte.MAX_VALUE : Byte.MIN_VALUE, type);
  }

  @Override
  List<Expression> initialList() {
    final List<Expression> out = new ArrayList<>();
    for (String name : buffers.keySet()) {
      switch (name) {
        case "count":
        case "sumLong":
          out.add(lit(0L, DataTypes.LongType));
          break;
        case "min":
          out.add(bound(true));
          break;
        case "max":
          out.add(bound(false));
          break;
        default:
          out.add(lit(0.0, DataTypes.DoubleType));
      }
    }
    return out;
  }

  @Override
  List<Expression> updateList() {
    final Expression missing = new IsNull(value);
    final Expression count = buffers.get("count");
    // a value the update reads is not null (the null test came first): no null tests after it
    final Expression present = new KnownNotNull(value);
    final Expression asDouble =
        type.equals(DataTypes.DoubleType) ? present : cast(present, DataTypes.DoubleType);
    final List<Expression> out = new ArrayList<>();
    for (Map.Entry<String, AttributeReference> e : buffers.entrySet()) {
      final Expression b = e.getValue();
      final Expression updated;
      switch (e.getKey()) {
        case "count":
          updated = new Add(b, lit(1L, DataTypes.LongType));
          break;
        case "sumDouble":
          updated = new Add(b, asDouble);
          break;
        case "sumLong":
          updated = new Add(b, cast(present, DataTypes.LongType));
          break;
        case "mean":
          updated = new Add(b, deltaN(asDouble, count));
          break;
        case "m2":
          {
            // CentralMomentAgg: m2 + delta * (delta - deltaN)
            final Expression delta = new Subtract(asDouble, buffers.get("mean"));
            updated = new Add(b, new Multiply(delta, new Subtract(delta, deltaN(asDouble, count))));
            break;
          }
        case "min":
          updated = least(b, present);
          break;
        default: // max
          updated = greatest(b, present);
      }
      out.add(new If(missing, b, updated));
    }
    return out;
  }

  /** CentralMomentAgg's deltaN: (x - mean) / (n + 1.0), n the count before this value. */
  private Expression deltaN(Expression asDouble, Expression count) {
    final Expression newN =
        new Add(cast(count, DataTypes.DoubleType), lit(1.0, DataTypes.DoubleType));
    return new Divide(new Subtract(asDouble, buffers.get("mean")), newN);
  }

  @Override
  List<Expression> mergeList(List<Expression> inputs) {
    final List<String> names = new ArrayList<>(buffers.keySet());
    final Expression n1 = cast(buffers.get("count"), DataTypes.DoubleType);
    final Expression n2 = cast(inputs.get(names.indexOf("count")), DataTypes.DoubleType);
    final List<Expression> out = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      final Expression left = buffers.get(names.get(i));
      final Expression right = inputs.get(i);
      switch (names.get(i)) {
        case "mean":
          {
            // CentralMomentAgg: avg.left + deltaN * n2
            out.add(new Add(left, new Multiply(mergedDeltaN(n1, n2, left, right), n2)));
            break;
          }
        case "m2":
          {
            // m2.left + m2.right + delta * deltaN * n1 * n2
            final Expression meanLeft = buffers.get("mean");
            final Expression meanRight = inputs.get(names.indexOf("mean"));
            final Expression delta = new Subtract(meanRight, meanLeft);
            out.add(
                new Add(
                    new Add(left, right),
                    new Multiply(
                        new Multiply(
                            new Multiply(delta, mergedDeltaN(n1, n2, meanLeft, meanRight)), n1),
                        n2)));
            break;
          }
        case "min":
          out.add(least(left, right));
          break;
        case "max":
          out.add(greatest(left, right));
          break;
        default:
          out.add(new Add(left, right));
      }
    }
    return out;
  }

  /** CentralMomentAgg's merge: If(n1 + n2 == 0.0, 0.0, (avg2 - avg1) / (n1 + n2)). */
  private static Expression mergedDeltaN(
      Expression n1, Expression n2, Expression meanLeft, Expression meanRight) {
    final Expression newN = new Add(n1, n2);
    final Literal zero = lit(0.0, DataTypes.DoubleType);
    return new If(
        new EqualTo(newN, zero), zero, new Divide(new Subtract(meanRight, meanLeft), newN));
  }

  @Override
  public Expression evaluateExpression() {
    final Expression count = buffers.get("count");
    final Expression none = new EqualTo(count, lit(0L, DataTypes.LongType));
    final Expression n = cast(count, DataTypes.DoubleType);
    final List<String> names = new ArrayList<>();
    final List<Expression> values = new ArrayList<>();
    for (String s : stats) {
      final Expression v;
      switch (s) {
        case "avg":
          // Average: sum / count, null for no values
          v = orNull(none, new Divide(buffers.get("sumDouble"), n), DataTypes.DoubleType);
          break;
        case "sum":
          v =
              buffers.containsKey("sumLong")
                  ? orNull(none, buffers.get("sumLong"), DataTypes.LongType)
                  : orNull(none, buffers.get("sumDouble"), DataTypes.DoubleType);
          break;
        case "stddev":
          {
            // StddevSamp: null for none, null (or NaN) for one, sqrt(m2 / (n - 1.0))
            final Literal one =
                nullOnDivideByZero
                    ? lit(null, DataTypes.DoubleType)
                    : lit(Double.NaN, DataTypes.DoubleType);
            v =
                new If(
                    new EqualTo(n, lit(0.0, DataTypes.DoubleType)),
                    lit(null, DataTypes.DoubleType),
                    new If(
                        new EqualTo(n, lit(1.0, DataTypes.DoubleType)),
                        one,
                        new Sqrt(
                            new Divide(
                                buffers.get("m2"),
                                new Subtract(n, lit(1.0, DataTypes.DoubleType))))));
            break;
          }
        case "min":
          v = orNull(none, buffers.get("min"), type);
          break;
        default:
          v = orNull(none, buffers.get("max"), type);
      }
      names.add("s" + names.size());
      values.add(v);
    }
    return struct(names, values);
  }

  private static Expression orNull(Expression none, Expression v, DataType t) {
    return new If(none, lit(null, t), v);
  }

  @Override
  public DataType dataType() {
    return evaluateExpression().dataType();
  }

  @Override
  public String prettyName() {
    return "lq_stats";
  }
}
