package lineagequality;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/** Columns that call a helper's static method in Spark's generated code. */
final class Calls {
  private Calls() {}

  /** `owner.method(arguments...)` returning `type`; null in, null out. */
  static Column staticCall(Class<?> owner, DataType type, String method, Expression... arguments) {
    return Line.column(
        Line.staticInvoke(
            owner,
            type,
            method,
            Arrays.asList(arguments),
            Collections.<AbstractDataType>emptyList()));
  }

  /** A string-array literal (no null elements). */
  static Expression strings(List<String> values) {
    return Literal.create(
        values.toArray(new String[0]), DataTypes.createArrayType(DataTypes.StringType, false));
  }
}
