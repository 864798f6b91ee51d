package lineagequality;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

import scala.collection.JavaConverters;
import scala.collection.Seq;

/** Columns that call a helper's static method in Spark's generated code. */
final class Calls {
  private Calls() {}

  /** `owner.method(arguments...)` returning `type`; null in, null out. */
  static Column staticCall(Class<?> owner, DataType type, String method, Expression... arguments) {
    Seq<Expression> args = JavaConverters.asScalaBuffer(Arrays.asList(arguments)).toSeq();
    Seq<AbstractDataType> noCasts =
        JavaConverters.asScalaBuffer(Collections.<AbstractDataType>emptyList()).toSeq();
    return new Column(new StaticInvoke(owner, type, method, args, noCasts, true, true, true));
  }

  /** A string-array literal (no null elements). */
  static Expression strings(List<String> values) {
    return Literal.create(
        values.toArray(new String[0]), DataTypes.createArrayType(DataTypes.StringType, false));
  }
}
