package lineagequality;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Iterator;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.XXH64;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.InputAdapter;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The key-set pass's hashes read straight off the scan's column batches (see
 * lineage_quality.engine.key_sets). The row path projects one row per input row, each slot's
 * packed hash and the checked keys' bytes, and that row cost more than the hashing: a string
 * object, the row's bytes and a list node per row, then the row read back. Here each batch is
 * hashed one slot at a time, as Spark's xxhash64 hashes the key's columns (seed 42, in order),
 * and a checked key's bytes are written from the vectors, encoded as the row path encodes them.
 *
 * <p>Only for a plain columnar file scan (its batches turned into rows, nothing between) of
 * integer, date, timestamp and plain (binary-collated) string columns. Anything else: null, and
 * the caller takes the row path, which reads the same scan.
 */
final class KeyColumns implements Serializable {
  private static final long serialVersionUID = 1L;
  static final int VALUE = 0; // an integer key's value, where it fits the hash bits: unchecked
  static final int WIDE = 1; // a bigint key's value past the hash bits: hashed, checked
  static final int HASHED = 2; // the key's columns hashed: checked
  private static final long SEED = 42L; // Spark's xxhash64
  // A slot's key bytes of one batch (4,096 rows) are staged together: past this (keys of
  // ~64 KiB each), the task fails and the caller counts each key set on its own pass.
  static final int MAX_BATCH_KEY_BYTES = 256 << 20;

  private final int shift;
  private final long mask;
  private final long fits; // a value in [-fits, fits) is one-to-one with its low `shift` bits
  private final int[] kinds; // per slot
  private final int[][] columns; // per slot, its key's columns (indexes into `types`)
  private final boolean[] keyed; // per slot: its key's bytes travel with its hash
  private final char[] types; // per column: b byte, s short, i int or date, l long, u string
  private final int[] ordinal; // per column, its vector in the scan's batches
  private final long modulus; // > 0 (tests only): hashes taken modulo it, as Spark's pmod

  private KeyColumns(
      int bits,
      int[] kinds,
      int[][] columns,
      boolean[] keyed,
      char[] types,
      int[] ordinal,
      long modulus) {
    this.shift = 64 - bits;
    this.mask = (1L << shift) - 1;
    this.fits = 1L << (shift - 1);
    this.kinds = kinds;
    this.columns = columns;
    this.keyed = keyed;
    this.types = types;
    this.ordinal = ordinal;
    this.modulus = modulus;
  }

  /**
   * The spec of `selected` (the key columns, in order) and its batches; null where the pass
   * must take the row path. Slot s's key is columns flat[starts[s] .. starts[s + 1]).
   */
  static KeyColumns of(
      Dataset<Row> selected,
      int bits,
      int[] kinds,
      int[] starts,
      int[] flat,
      int[] keyed,
      long modulus) {
    StructField[] fields = selected.schema().fields();
    char[] types = new char[fields.length];
    for (int c = 0; c < fields.length; c++) {
      types[c] = type(fields[c].dataType());
      if (types[c] == 0) {
        return null;
      }
    }
    int[] ordinal = ordinals(selected.queryExecution().executedPlan());
    if (ordinal == null || ordinal.length != fields.length) {
      return null;
    }
    int[][] columns = new int[kinds.length][];
    boolean[] keys = new boolean[kinds.length];
    for (int s = 0; s < kinds.length; s++) {
      columns[s] = Arrays.copyOfRange(flat, starts[s], starts[s + 1]);
      keys[s] = keyed[s] != 0;
      boolean value = kinds[s] == VALUE || kinds[s] == WIDE;
      if (value && (columns[s].length != 1 || types[columns[s][0]] == 'u')) {
        throw new IllegalArgumentException("slot " + s + " is a value: one integer column");
      }
    }
    return new KeyColumns(bits, kinds, columns, keys, types, ordinal, modulus);
  }

  /** The batches of the scan under `selected`'s plan (which `of` accepted). */
  static RDD<ColumnarBatch> batches(Dataset<Row> selected) {
    return scan(selected.queryExecution().executedPlan()).executeColumnar();
  }

  private static char type(DataType t) {
    if (t == DataTypes.StringType) { // the default collation only: its bytes are its value
      return 'u';
    }
    if (t.equals(DataTypes.ByteType)) {
      return 'b';
    }
    if (t.equals(DataTypes.ShortType)) {
      return 's';
    }
    if (t.equals(DataTypes.IntegerType) || t.equals(DataTypes.DateType)) {
      return 'i';
    }
    if (t.equals(DataTypes.LongType)
        || t.equals(DataTypes.TimestampType)
        || t.equals(DataTypes.TimestampNTZType)) {
      return 'l';
    }
    return 0;
  }

  /** The columnar file scan a plan only turns into rows (and selects from), else null. */
  private static SparkPlan scan(SparkPlan plan) {
    if (plan instanceof WholeStageCodegenExec) {
      plan = ((WholeStageCodegenExec) plan).child();
    }
    if (plan instanceof ProjectExec) {
      ProjectExec project = (ProjectExec) plan;
      for (int i = 0; i < project.projectList().length(); i++) {
        NamedExpression e = project.projectList().apply(i);
        if (!(e instanceof AttributeReference)) {
          return null; // computes something: not a plain selection
        }
      }
      plan = project.child();
    }
    if (!(plan instanceof ColumnarToRowExec)) {
      return null;
    }
    SparkPlan scan = ((ColumnarToRowExec) plan).child();
    if (scan instanceof InputAdapter) { // whole-stage codegen's boundary, nothing computed
      scan = ((InputAdapter) scan).child();
    }
    return scan instanceof FileSourceScanExec && scan.supportsColumnar() ? scan : null;
  }

  /** Per output column of `plan`, its vector among the scan's; null if no plain scan. */
  private static int[] ordinals(SparkPlan plan) {
    SparkPlan scan = scan(plan);
    if (scan == null) {
      return null;
    }
    int[] out = new int[plan.output().length()];
    for (int c = 0; c < out.length; c++) {
      Attribute wanted = plan.output().apply(c);
      out[c] = -1;
      for (int j = 0; j < scan.output().length(); j++) {
        if (scan.output().apply(j).exprId().equals(wanted.exprId())) {
          out[c] = j;
        }
      }
      if (out[c] < 0) {
        return null;
      }
    }
    return out;
  }

  /** One map task's batches as the rows {@link KeyChunks#chunks} reads. */
  KeyChunks.Rows rows(Iterator<ColumnarBatch> it) {
    return new Batches(it);
  }

  /**
   * Hashes and key bytes of one batch at a time, per slot (staged per batch: written per row
   * when taken, the key's strings were decoded twice, and RU lost what the columns gained).
   */
  private final class Batches implements KeyChunks.Rows {
    private final Iterator<ColumnarBatch> it;
    private int n;
    private int row;
    private long[][] hashes = new long[kinds.length][0];
    private boolean[][] has = new boolean[kinds.length][0];
    private byte[][] keys = new byte[kinds.length][];
    private int[][] ends = new int[kinds.length][0];

    Batches(Iterator<ColumnarBatch> it) {
      this.it = it;
      for (int s = 0; s < kinds.length; s++) {
        keys[s] = keyed[s] ? new byte[1 << 16] : null;
      }
    }

    @Override
    public boolean advance() {
      while (row + 1 >= n) {
        if (!it.hasNext()) {
          row = n; // stays past the end: asked again, the answer is the same
          return false;
        }
        load(it.next());
      }
      row++;
      return true;
    }

    @Override
    public boolean isNull(int c) {
      return !has[c][row];
    }

    @Override
    public long hash(int c) {
      return hashes[c][row];
    }

    @Override
    public void addKey(KeyChunks.Buffer b, long h, int c) {
      b.add(h, keys[c], row == 0 ? 0 : ends[c][row - 1], ends[c][row]);
    }

    private void load(ColumnarBatch batch) {
      n = batch.numRows();
      row = -1;
      if (hashes[0].length < n) {
        for (int s = 0; s < kinds.length; s++) {
          hashes[s] = new long[n];
          has[s] = new boolean[n];
          ends[s] = new int[n];
        }
      }
      for (int s = 0; s < kinds.length; s++) {
        if (kinds[s] == HASHED) {
          hashed(batch, s);
        } else {
          valued(batch, s);
        }
      }
    }

    /** An integer key's slot: the value itself (VALUE) or its hash past the bits (WIDE). */
    private void valued(ColumnarBatch batch, int s) {
      int c = columns[s][0];
      ColumnVector v = batch.column(ordinal[c]);
      long top = (long) s << shift;
      boolean wide = kinds[s] == WIDE;
      long[] h = hashes[s];
      boolean[] present = has[s];
      int at = 0;
      for (int r = 0; r < n; r++) {
        boolean known = !v.isNullAt(r);
        long x = known ? value(v, types[c], r) : 0;
        boolean inside = x >= -fits && x < fits;
        present[r] = known && inside != wide;
        if (!present[r]) {
          if (keyed[s]) {
            ends[s][r] = at;
          }
          continue;
        }
        h[r] = ((wide ? weak(XXH64.hashLong(x, SEED)) : x) & mask) | top;
        if (keyed[s]) {
          at = fixed(s, at, x);
          ends[s][r] = at;
        }
      }
    }

    /** A key's columns hashed as xxhash64 hashes them, where none is null. */
    private void hashed(ColumnarBatch batch, int s) {
      int[] cs = columns[s];
      ColumnVector[] vs = new ColumnVector[cs.length];
      for (int k = 0; k < cs.length; k++) {
        vs[k] = batch.column(ordinal[cs[k]]);
      }
      long top = (long) s << shift;
      long[] h = hashes[s];
      boolean[] present = has[s];
      int at = 0;
      for (int r = 0; r < n; r++) {
        boolean known = true;
        for (int k = 0; k < cs.length && known; k++) {
          known = !vs[k].isNullAt(r);
        }
        present[r] = known;
        if (!known) {
          if (keyed[s]) {
            ends[s][r] = at;
          }
          continue;
        }
        long x = SEED;
        for (int k = 0; k < cs.length; k++) {
          char t = types[cs[k]];
          if (t == 'u') {
            UTF8String u = vs[k].getUTF8String(r);
            x = XXH64.hashUnsafeBytes(u.getBaseObject(), u.getBaseOffset(), u.numBytes(), x);
            if (keyed[s]) {
              at = string(s, at, u);
            }
          } else {
            long value = value(vs[k], t, r);
            x = t == 'l' ? XXH64.hashLong(value, x) : XXH64.hashInt((int) value, x);
            if (keyed[s]) {
              at = fixed(s, at, value);
            }
          }
        }
        h[r] = (weak(x) & mask) | top;
        if (keyed[s]) {
          ends[s][r] = at;
        }
      }
    }

    /** A fixed-width value as 8 bytes (the row path writes a fixed-width column's 8). */
    private int fixed(int s, int at, long value) {
      room(s, (long) at + 8);
      Platform.putLong(keys[s], Platform.BYTE_ARRAY_OFFSET + at, value);
      return at + 8;
    }

    /** A string as its length (a varint) and bytes, as the row path writes it. */
    private int string(int s, int at, UTF8String u) {
      int size = u.numBytes();
      room(s, (long) at + size + 5);
      byte[] bytes = keys[s];
      at = KeyChunks.varint(bytes, at, size);
      Platform.copyMemory(
          u.getBaseObject(), u.getBaseOffset(), bytes, Platform.BYTE_ARRAY_OFFSET + at, size);
      return at + size;
    }

    private long weak(long hash) {
      return modulus > 0 ? Math.floorMod(hash, modulus) : hash;
    }

    private void room(int s, long needed) {
      if (needed > MAX_BATCH_KEY_BYTES) { // the task fails; the caller counts each set alone
        throw new IllegalStateException(
            "over " + MAX_BATCH_KEY_BYTES + " bytes of keys in one batch of " + n + " rows");
      }
      if (needed > keys[s].length) {
        long grown = Math.min(2L * keys[s].length, MAX_BATCH_KEY_BYTES);
        keys[s] = Arrays.copyOf(keys[s], (int) Math.max(grown, needed));
      }
    }
  }

  private static long value(ColumnVector v, char type, int r) {
    switch (type) {
      case 'b':
        return v.getByte(r);
      case 's':
        return v.getShort(r);
      case 'i':
        return v.getInt(r);
      default:
        return v.getLong(r);
    }
  }
}
