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
 *
 * <p>The column helpers turn that table, once, on the driver, into a walk table: each transition
 * is the byte offset of the next state's row (-1 for a dead state), read with one unchecked load,
 * so a byte costs one add and one load on the path from a state to the next (the u16 layout
 * needed a multiply and two loads: ~10 cycles a byte, ~80 ns for an e-mail address).
 *
 * <pre>
 * walk table (native byte order, built by walkTable / walkSetTable, checked when built):
 *   0  i32  state count N
 *   4  i32  options (1 = the pattern ends with `$`)
 *   8  i64  set tables: the wire table's `ends` (non-zero: a pattern ends with `$`); else 0
 *   16 N rows of 129 i32: bytes 0..127 -> the next row's offset in the table, -1 = dead;
 *      128 (end of input) -> for one pattern 1 if accepting else 0, for a set the state's index
 *   16 + N * 516: set tables only, N i64 accept masks
 * </pre>
 */
public final class RegexDfa {
  private static final int SYMBOLS = 129;
  private static final int END = 128;
  private static final int ROWS = 16;
  private static final int ROW_BYTES = SYMBOLS * 4;
  private static final long BASE = Platform.BYTE_ARRAY_OFFSET;
  private static final int DEAD_END = -1; // walk(): no continuation can match
  private static final int NOT_ASCII = -2; // walk(): java.util.regex decides the value
  private static final ConcurrentHashMap<String, Pattern> PATTERNS = new ConcurrentHashMap<>();

  private RegexDfa() {}

  /** True when `value` contains a match of the pattern `walk` (a walk table) was built from. */
  public static boolean find(UTF8String value, byte[] walk, UTF8String pattern) {
    final Object base = value.getBaseObject();
    final long offset = value.getBaseOffset();
    final int length = value.numBytes();
    if ((Platform.getInt(walk, BASE + 4) & 1) != 0 && length > 0) {
      // the pattern ends with `$`, which java.util.regex also matches before a final line
      // terminator (but not between \r and \n): such values are left to it
      final byte last = Platform.getByte(base, offset + length - 1);
      if (last == '\n' || last == '\r') {
        return javaFind(value, pattern);
      }
    }
    final int row = walk(base, offset, length, walk);
    if (row == DEAD_END) {
      return false;
    }
    if (row == NOT_ASCII) {
      return javaFind(value, pattern);
    }
    return Platform.getInt(walk, BASE + row + END * 4) != 0;
  }

  /**
   * The row reached after `value`'s bytes; DEAD_END when no continuation can match and every
   * byte is ASCII; NOT_ASCII when a byte is not (java.util.regex decides those values).
   */
  private static int walk(Object base, long offset, int length, byte[] walk) {
    int row = ROWS;
    for (int i = 0; i < length; i++) {
      final int b = Platform.getByte(base, offset + i);
      if (b < 0) {
        return NOT_ASCII;
      }
      row = Platform.getInt(walk, BASE + row + (b << 2));
      if (row < 0) {
        // no ASCII continuation matches; a non-ASCII byte later still could (e.g. [^a-z])
        for (int j = i + 1; j < length; j++) {
          if (Platform.getByte(base, offset + j) < 0) {
            return NOT_ASCII;
          }
        }
        return DEAD_END;
      }
    }
    return row;
  }

  /**
   * The bitmask of the patterns (a walk table of lineage_quality.engine.regex_dfa_set) that find
   * a match in `value`: bit i for patterns[i]. One walk over the bytes for all of them.
   */
  public static long findAll(UTF8String value, byte[] walk, ArrayData patterns) {
    final Object base = value.getBaseObject();
    final long offset = value.getBaseOffset();
    final int length = value.numBytes();
    if (Platform.getLong(walk, BASE + 8) != 0 && length > 0) {
      final byte last = Platform.getByte(base, offset + length - 1);
      if (last == '\n' || last == '\r') {
        return javaFindAll(value, patterns);
      }
    }
    final int row = walk(base, offset, length, walk);
    if (row == DEAD_END) {
      return 0L;
    }
    if (row == NOT_ASCII) {
      return javaFindAll(value, patterns);
    }
    final int state = Platform.getInt(walk, BASE + row + END * 4);
    final int states = Platform.getInt(walk, BASE);
    return Platform.getLong(walk, BASE + ROWS + (long) states * ROW_BYTES + 8L * state);
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

  private static int readU16(byte[] t, int at) {
    return ((t[at] & 0xff) << 8) | (t[at + 1] & 0xff);
  }

  /**
   * The walk table of a wire table (regex_dfa.py's layout: u32 N, u8 options, N flag bytes, N x
   * 129 u16 next states). Every index is checked here, so the walk's unchecked loads stay inside.
   */
  static byte[] walkTable(byte[] wire) {
    final int states = wireStates(wire, 5);
    final int flags = 5;
    final int next = flags + states;
    if (wire.length != next + states * SYMBOLS * 2) {
      throw new IllegalArgumentException("DFA table of " + wire.length + " bytes for " + states
          + " states");
    }
    final byte[] walk = new byte[ROWS + states * ROW_BYTES];
    Platform.putInt(walk, BASE, states);
    Platform.putInt(walk, BASE + 4, wire[4] & 1);
    writeRows(wire, flags, next, states, walk, false);
    return walk;
  }

  /**
   * The walk table of a set's wire table (regex_dfa_set.py's layout: u32 N, u8 width, u64 ends,
   * N flag bytes, N u64 accept masks, N x 129 u16 next states).
   */
  static byte[] walkSetTable(byte[] wire) {
    final int states = wireStates(wire, 13);
    final int flags = 13;
    final int accepts = flags + states;
    final int next = accepts + 8 * states;
    if (wire.length != next + states * SYMBOLS * 2) {
      throw new IllegalArgumentException("DFA set table of " + wire.length + " bytes for "
          + states + " states");
    }
    final long rows = ROWS + (long) states * ROW_BYTES;
    final byte[] walk = new byte[Math.toIntExact(rows + 8L * states)];
    Platform.putInt(walk, BASE, states);
    Platform.putLong(walk, BASE + 8, readLong(wire, 5));
    writeRows(wire, flags, next, states, walk, true);
    for (int state = 0; state < states; state++) {
      Platform.putLong(walk, BASE + rows + 8L * state, readLong(wire, accepts + 8 * state));
    }
    return walk;
  }

  /**
   * The walk table's rows from the wire table's u16 rows at `next` and flag bytes at `flags`;
   * the end-of-input entry is the reached state's index for a set, else 1 if it accepts.
   */
  private static void writeRows(
      byte[] wire, int flags, int next, int states, byte[] walk, boolean set) {
    for (int state = 0; state < states; state++) {
      for (int symbol = 0; symbol < SYMBOLS; symbol++) {
        final int target = target(wire, next + (state * SYMBOLS + symbol) * 2, states);
        final int value;
        if (symbol == END) {
          value = set ? target : (wire[flags + target] & 1);
        } else {
          value = (wire[flags + target] & 2) != 0 ? DEAD_END : ROWS + target * ROW_BYTES;
        }
        Platform.putInt(walk, BASE + ROWS + (long) state * ROW_BYTES + symbol * 4L, value);
      }
    }
  }

  private static int wireStates(byte[] wire, int header) {
    if (wire.length < header) {
      throw new IllegalArgumentException("DFA table of " + wire.length + " bytes");
    }
    final int states = readInt(wire, 0);
    // the engine builds at most 1024 states (regex_dfa.MAX_STATES, regex_dfa_set
    // .MAX_PRODUCT_STATES); 4096 bounds a crafted table's walk table at ~2 MiB
    if (states < 1 || states > 4096) {
      throw new IllegalArgumentException("DFA table of " + states + " states");
    }
    return states;
  }

  private static int target(byte[] wire, int at, int states) {
    final int target = readU16(wire, at);
    if (target >= states) {
      throw new IllegalArgumentException("DFA table leads to state " + target + " of " + states);
    }
    return target;
  }

  /** The bitmask of `findAll` as a bigint column; null in, null out. */
  public static Column columnAll(Column value, byte[] table, List<String> patterns) {
    return Calls.staticCall(
        RegexDfa.class,
        DataTypes.LongType,
        "findAll",
        Line.expression(value),
        Literal.create(walkSetTable(table), DataTypes.BinaryType),
        Calls.strings(patterns));
  }

  private static boolean javaFind(UTF8String value, UTF8String pattern) {
    try {
      return PATTERNS.computeIfAbsent(pattern.toString(), Pattern::compile)
          .matcher(value.toString())
          .find(0);
    } catch (StackOverflowError e) {
      // java.util.regex recurses per repetition: a long value can overflow the task's stack, and
      // Spark ends the whole JVM on a StackOverflowError. As an ordinary error the task fails,
      // and the evaluation reports it, without killing the evaluator.
      throw new IllegalArgumentException(
          "java.util.regex ran out of stack matching `" + pattern + "` on a value of "
              + value.numBytes() + " bytes");
    }
  }

  /** `value RLIKE pattern` as a DFA walk; null in, null out. */
  public static Column column(Column value, byte[] table, String pattern) {
    return Calls.staticCall(
        RegexDfa.class,
        DataTypes.BooleanType,
        "find",
        Line.expression(value),
        Literal.create(walkTable(table), DataTypes.BinaryType),
        Literal.create(pattern, DataTypes.StringType));
  }
}
