package lineagequality;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;


/**
 * Pattern rules on a DFA built by lineage_quality.engine.regex_dfa (the table layout is
 * described there). Same answer as Spark's rlike (java.util.regex find): the DFA decides values
 * made of ASCII bytes; a value with any other byte goes to java.util.regex itself.
 */
public final class RegexDfa {
  private static final int SYMBOLS = 129;
  private static final int END = 128;
  private static final ConcurrentHashMap<String, Pattern> PATTERNS = new ConcurrentHashMap<>();

  private RegexDfa() {}

  /** True when `value` contains a match of the pattern `table` was compiled from. */
  public static boolean find(UTF8String value, byte[] table, UTF8String pattern) {
    final Object base = value.getBaseObject();
    final long offset = value.getBaseOffset();
    final int length = value.numBytes();
    final int states =
        ((table[0] & 0xff) << 24) | ((table[1] & 0xff) << 16) | ((table[2] & 0xff) << 8)
            | (table[3] & 0xff);
    if ((table[4] & 1) != 0 && length > 0) {
      // the pattern ends with `$`, which java.util.regex also matches before a final line
      // terminator (but not between \r and \n): such values are left to it
      final byte last = Platform.getByte(base, offset + length - 1);
      if (last == '\n' || last == '\r') {
        return javaFind(value, pattern);
      }
    }
    final int flags = 5;
    final int next = flags + states;
    int state = 0;
    for (int i = 0; i < length; i++) {
      final int b = Platform.getByte(base, offset + i);
      if (b < 0) {
        return javaFind(value, pattern);
      }
      final int at = next + (state * SYMBOLS + b) * 2;
      state = ((table[at] & 0xff) << 8) | (table[at + 1] & 0xff);
      if ((table[flags + state] & 2) != 0) {
        // no ASCII continuation matches; a non-ASCII byte later still could (e.g. [^a-z])
        for (int j = i + 1; j < length; j++) {
          if (Platform.getByte(base, offset + j) < 0) {
            return javaFind(value, pattern);
          }
        }
        return false;
      }
    }
    final int at = next + (state * SYMBOLS + END) * 2;
    state = ((table[at] & 0xff) << 8) | (table[at + 1] & 0xff);
    return (table[flags + state] & 1) != 0;
  }

  /**
   * The bitmask of the patterns (a table of lineage_quality.engine.regex_dfa_set) that find a
   * match in `value`: bit i for patterns[i]. One walk over the bytes for all of them.
   */
  public static long findAll(UTF8String value, byte[] table, ArrayData patterns) {
    final Object base = value.getBaseObject();
    final long offset = value.getBaseOffset();
    final int length = value.numBytes();
    final int states = readInt(table, 0);
    final long ends = readLong(table, 5);
    if (ends != 0 && length > 0) {
      final byte last = Platform.getByte(base, offset + length - 1);
      if (last == '\n' || last == '\r') {
        return javaFindAll(value, patterns);
      }
    }
    final int flags = 13;
    final int accepts = flags + states;
    final int next = accepts + 8 * states;
    int state = 0;
    for (int i = 0; i < length; i++) {
      final int b = Platform.getByte(base, offset + i);
      if (b < 0) {
        return javaFindAll(value, patterns);
      }
      final int at = next + (state * SYMBOLS + b) * 2;
      state = ((table[at] & 0xff) << 8) | (table[at + 1] & 0xff);
      if ((table[flags + state] & 2) != 0) {
        for (int j = i + 1; j < length; j++) {
          if (Platform.getByte(base, offset + j) < 0) {
            return javaFindAll(value, patterns);
          }
        }
        return 0L;
      }
    }
    final int at = next + (state * SYMBOLS + END) * 2;
    state = ((table[at] & 0xff) << 8) | (table[at + 1] & 0xff);
    return readLong(table, accepts + 8 * state);
  }

  private static long javaFindAll(UTF8String value, ArrayData patterns) {
    long mask = 0L;
    for (int i = 0; i < patterns.numElements(); i++) {
      if (javaFind(value, patterns.getUTF8String(i))) {
        mask |= 1L << i;
      }
    }
    return mask;
  }

  private static int readInt(byte[] t, int at) {
    return ((t[at] & 0xff) << 24) | ((t[at + 1] & 0xff) << 16) | ((t[at + 2] & 0xff) << 8)
        | (t[at + 3] & 0xff);
  }

  private static long readLong(byte[] t, int at) {
    return ((long) readInt(t, at) << 32) | (readInt(t, at + 4) & 0xffffffffL);
  }

  /** The bitmask of `findAll` as a bigint column; null in, null out. */
  public static Column columnAll(Column value, byte[] table, List<String> patterns) {
    return Calls.staticCall(
        RegexDfa.class,
        DataTypes.LongType,
        "findAll",
        value.expr(),
        Literal.create(table, DataTypes.BinaryType),
        Calls.strings(patterns));
  }

  private static boolean javaFind(UTF8String value, UTF8String pattern) {
    return PATTERNS.computeIfAbsent(pattern.toString(), Pattern::compile)
        .matcher(value.toString())
        .find(0);
  }

  /** `value RLIKE pattern` as a DFA walk; null in, null out. */
  public static Column column(Column value, byte[] table, String pattern) {
    return Calls.staticCall(
        RegexDfa.class,
        DataTypes.BooleanType,
        "find",
        value.expr(),
        Literal.create(table, DataTypes.BinaryType),
        Literal.create(pattern, DataTypes.StringType));
  }
}
