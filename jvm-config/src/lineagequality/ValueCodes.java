package lineagequality;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;


/**
 * Several value lists on one string column (see lineage_quality.engine.shared_columns): the
 * value's index in the sorted union of the lists, found once per row, so each list's membership
 * is a bit test instead of a search of its own.
 *
 * <p>The index is found in an open-addressing table built once per query: a slot per value holds
 * its first 8 bytes (UTF8String.getPrefix), its length in bytes and its index. Those two numbers
 * identify a value of up to 8 bytes; a longer one is also compared whole. One multiply and, as a
 * rule, one probe per row, where a binary search of the union compared bytes ~log2(n) times.
 */
public final class ValueCodes {
  private ValueCodes() {}

  private static final int SLOT = 16; // prefix (8 bytes), length (4), index (4; -1: empty)

  /** The index of `value` in `sorted` (UTF-8 byte order, as UTF8String compares), else -1. */
  public static int code(UTF8String value, byte[] table, ArrayData sorted) {
    final long prefix = value.getPrefix();
    final int length = value.numBytes();
    final int mask = table.length / SLOT - 1;
    int slot = slotOf(prefix, length, mask);
    while (true) {
      final int at = slot * SLOT;
      final int index = readInt(table, at + 12);
      if (index < 0) {
        return -1;
      }
      if (readLong(table, at) == prefix
          && readInt(table, at + 8) == length
          && (length <= 8 || sorted.getUTF8String(index).equals(value))) {
        return index;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** The lookup table of `sorted` for `code`: a power of two of slots, at most half full. */
  static byte[] table(List<String> sorted) {
    int slots = 8;
    while (slots < 2 * sorted.size()) {
      slots *= 2;
    }
    final ByteBuffer table = ByteBuffer.allocate(slots * SLOT);
    for (int slot = 0; slot < slots; slot++) {
      table.putInt(slot * SLOT + 12, -1);
    }
    final int mask = slots - 1;
    for (int index = 0; index < sorted.size(); index++) {
      final UTF8String value = UTF8String.fromString(sorted.get(index));
      int slot = slotOf(value.getPrefix(), value.numBytes(), mask);
      while (table.getInt(slot * SLOT + 12) >= 0) {
        slot = (slot + 1) & mask;
      }
      table.putLong(slot * SLOT, value.getPrefix());
      table.putInt(slot * SLOT + 8, value.numBytes());
      table.putInt(slot * SLOT + 12, index);
    }
    return table.array();
  }

  private static int slotOf(long prefix, int length, int mask) {
    final long mixed = (prefix ^ (length * 0x9E3779B97F4A7C15L)) * 0xBF58476D1CE4E5B9L;
    return (int) (mixed >>> 40) & mask;
  }

  // big-endian, as ByteBuffer wrote them; one load each once compiled
  private static final VarHandle INTS =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private static int readInt(byte[] t, int at) {
    return (int) INTS.get(t, at);
  }

  private static long readLong(byte[] t, int at) {
    return (long) LONGS.get(t, at);
  }

  /** `code` as an int column; null in, null out. */
  public static Column column(Column value, List<String> sorted) {
    return Calls.staticCall(
        ValueCodes.class,
        DataTypes.IntegerType,
        "code",
        Line.expression(value),
        Literal.create(table(sorted), DataTypes.BinaryType),
        Calls.strings(sorted));
  }
}
