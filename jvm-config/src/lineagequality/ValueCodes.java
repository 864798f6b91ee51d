package lineagequality;

import java.util.List;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;


/**
 * Several value lists on one string column (see lineage_quality.engine.shared_columns): the
 * value's index in the sorted union of the lists, found once per row by binary search, so each
 * list's membership is a bit test instead of a search of its own.
 */
public final class ValueCodes {
  private ValueCodes() {}

  /** The index of `value` in `sorted` (UTF-8 byte order, as UTF8String compares), else -1. */
  public static int code(UTF8String value, ArrayData sorted) {
    int low = 0;
    int high = sorted.numElements() - 1;
    while (low <= high) {
      final int mid = (low + high) >>> 1;
      final int c = sorted.getUTF8String(mid).compareTo(value);
      if (c < 0) {
        low = mid + 1;
      } else if (c > 0) {
        high = mid - 1;
      } else {
        return mid;
      }
    }
    return -1;
  }

  /** `code` as an int column; null in, null out. */
  public static Column column(Column value, List<String> sorted) {
    return Calls.staticCall(
        ValueCodes.class, DataTypes.IntegerType, "code", value.expr(), Calls.strings(sorted));
  }
}
