package lineagequality;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.vectorized.ColumnarBatch;

import scala.reflect.ClassTag$;

/**
 * Uniqueness on 64-bit key hashes (see lineage_quality.engine.uniqueness): the input is one
 * non-null bigint column, already hash-partitioned on it, so equal hashes meet in one partition.
 * Each partition sorts its hashes in a primitive array (no generic aggregation, no boxing),
 * counts its rows and distinct hashes run by run, and lists the hashes seen more than once: the only places
 * where two rows can share a key, checked exactly by the caller. A partition with more than its
 * share of `maxCandidates` such hashes stops listing them and says so (the caller then falls
 * back), so the driver never collects much more than `maxCandidates` hashes. Several key sets
 * share one shuffle (lineage_quality.engine.key_sets): the top bits of each hash name its key
 * set, and everything is counted per key set ({@link #summarizePacked}). Where Spark runs in local
 * mode, that shuffle's chunks go from task to task in the heap instead ({@link LocalExchange}).
 */
public final class KeyHashes {
  private KeyHashes() {}

  /** Rows, distinct hashes, and the repeated hashes (a Dataset of one bigint column "h"). */
  public static final class Summary {
    private final long rows;
    private final long distinct;
    private final boolean overflow;
    private final long[] candidates;

    Summary(long rows, long distinct, boolean overflow, long[] candidates) {
      this.rows = rows;
      this.distinct = distinct;
      this.overflow = overflow;
      this.candidates = candidates;
    }

    public long rows() {
      return rows;
    }

    public long distinct() {
      return distinct;
    }

    public boolean overflow() {
      return overflow;
    }

    public long candidateCount() {
      return candidates.length;
    }

    public Dataset<Row> candidates(SparkSession spark) {
      List<Long> boxed = new ArrayList<>(candidates.length);
      for (long c : candidates) {
        boxed.add(c);
      }
      return spark.createDataset(boxed, Encoders.LONG()).toDF("h");
    }
  }

  public static Summary summarize(Dataset<Row> hashes, int maxCandidates) {
    Packed p = summarizePacked(hashes, 0, 1L, maxCandidates, 0);
    return new Summary(p.rows(0), p.distinct(0), p.overflow(0), p.candidates);
  }

  /**
   * Rows, distinct hashes and repeated hashes per key set, for several key sets in one shuffle:
   * the top `bits` of each hash name its key set (0 bits: one set). Repeated hashes are listed
   * only for the sets in the bit mask `listed` (a set whose hash is its value needs no check);
   * a set past `maxCandidates` lists none and is flagged, alone, so the caller falls back for
   * that set only. With `partitions` > 0 the hashes are shuffled here into that many
   * partitions, as arrays of longs: a shuffle of one-long rows costs several times more to
   * write and to read (a row header and a call per row; measured on 20M hashes). With 0 they
   * are partitioned already.
   */
  public static Packed summarizePacked(
      Dataset<Row> hashes, int bits, long listed, int maxCandidates, int partitions) {
    int columns = hashes.schema().fields().length;
    int[] none = new int[columns];
    Arrays.fill(none, -1);
    return summarizePacked(
        hashes, bits, listed, maxCandidates, partitions, none, none, 0L, false, 0L, 0L);
  }

  /**
   * {@link #summarizePacked} with keys: the first keyOf.length columns are hashes, and where
   * keyOf[c] >= 0, the keyFields[c] columns from keyOf[c] on are that hash's key. Its bytes
   * travel with the hash, and each partition checks its own repeated hashes on them while its
   * keys fit `keyBudget` bytes ({@link KeyChunks#joined}); past it, it lists them as without keys.
   * Column c's hashes are key set c's (its slot in the top bits). With `bitmaps`, the sets not in
   * `listed` (an integer key, its values their own hashes) travel mostly as bitmaps ({@link
   * KeyBitmaps}). `expectedRows` (0: unknown) and `localBudget` say whether the chunks may be
   * exchanged in memory ({@link LocalExchange#exchange}).
   */
  public static Packed summarizePacked(
      Dataset<Row> hashes,
      int bits,
      long listed,
      int maxCandidates,
      int partitions,
      int[] keyOf,
      int[] keyFields,
      long keyBudget,
      boolean bitmaps,
      long expectedRows,
      long localBudget) {
    final int sets = 1 << bits;
    long unchecked = 0;
    for (int c = 0; c < keyOf.length; c++) {
      unchecked |= (listed >>> c & 1) == 0 && keyOf[c] < 0 ? 1L << c : 0;
    }
    // bitmaps count column c's values as set c's: each column must be its own set
    final long bitmapped = bitmaps && partitions > 0 && keyOf.length <= sets ? unchecked : 0;
    StructField[] fields = hashes.schema().fields();
    final boolean[] fixed = new boolean[fields.length];
    for (int i = 0; i < fields.length; i++) {
      fixed[i] = UnsafeRow.isFixedLength(fields[i].dataType());
    }
    int[] keyWidth = new int[keyOf.length];
    for (int c = 0; c < keyOf.length; c++) {
      keyWidth[c] = keyOf[c] < 0 ? -1 : 0;
      for (int k = keyOf[c]; k >= 0 && k < keyOf[c] + keyFields[c]; k++) {
        keyWidth[c] += LocalExchange.width(fields[k].dataType());
      }
    }
    final long expected = expectedRows * LocalExchange.perRow(keyWidth, bitmapped);
    JavaRDD<InternalRow> rows =
        JavaRDD.fromRDD(
            hashes.queryExecution().toRdd(), ClassTag$.MODULE$.apply(InternalRow.class));
    final int n = partitions > 0 ? partitions : rows.getNumPartitions();
    // each partition lists at most its share, so what reaches the driver stays near the limit
    final int limit = Math.max(1, maxCandidates / Math.max(1, n));
    List<long[]> parts;
    if (partitions > 0) {
      parts =
          shuffled(
              rows.mapPartitionsToPair(
                  (Iterator<InternalRow> it) ->
                      KeyChunks.chunks(
                          KeyChunks.of(it, keyOf, keyFields, fixed), n, keyOf, bitmapped)),
              n,
              keyBudget,
              bits,
              listed,
              limit,
              bitmapped,
              expected,
              localBudget);
    } else {
      parts =
          rows.mapPartitions(
                  (Iterator<InternalRow> it) ->
                      partition(
                          new KeyChunks.Joined(read(it), null, null, -1),
                          bits,
                          listed,
                          limit,
                          0L))
              .collect();
    }
    return tallied(parts, bits, maxCandidates, partitions > 0);
  }

  /**
   * {@link #summarizePacked} read straight off the scan's column batches ({@link KeyColumns}),
   * the hashes computed here from the key columns `names` of `data`: slot s (a column of the
   * row path) is of kind kinds[s] on the columns flat[starts[s] .. starts[s + 1]), its key's
   * bytes travelling with it where keyed[s] != 0. `modulus` > 0 (tests only) weakens the hashes
   * as lineage_quality.engine.uniqueness.key_hash does. `expectedRows` and `localBudget` as in
   * {@link #summarizePacked}. Null where the scan is not a plain columnar one of such columns: the
   * caller takes the row path.
   */
  public static Packed summarizeColumns(
      Dataset<Row> data,
      String[] names,
      int[] kinds,
      int[] starts,
      int[] flat,
      int[] keyed,
      int bits,
      long listed,
      int maxCandidates,
      int partitions,
      long keyBudget,
      boolean bitmaps,
      long modulus,
      long expectedRows,
      long localBudget) {
    if (partitions <= 0) {
      return null;
    }
    KeyColumns spec;
    RDD<ColumnarBatch> scanned;
    StructField[] fields;
    try { // planning only: whatever fails here, the row path may still count
      Column[] picked = new Column[names.length];
      for (int c = 0; c < names.length; c++) {
        picked[c] = data.col("`" + names[c].replace("`", "``") + "`");
      }
      Dataset<Row> selected = data.select(picked);
      fields = selected.schema().fields();
      spec = KeyColumns.of(selected, bits, kinds, starts, flat, keyed, modulus);
      scanned = spec == null ? null : KeyColumns.batches(selected);
    } catch (RuntimeException e) {
      return null;
    }
    if (scanned == null) {
      return null;
    }
    final int sets = 1 << bits;
    final int[] keyOf = new int[kinds.length];
    long unchecked = 0;
    for (int s = 0; s < kinds.length; s++) {
      keyOf[s] = keyed[s] != 0 ? 0 : -1;
      unchecked |= (listed >>> s & 1) == 0 && keyOf[s] < 0 ? 1L << s : 0;
    }
    final long bitmapped = bitmaps && kinds.length <= sets ? unchecked : 0;
    int[] keyWidth = new int[kinds.length];
    for (int s = 0; s < kinds.length; s++) {
      // kind 1: a bigint's values past the hash bits, a slot almost always empty
      keyWidth[s] = kinds[s] == 1 ? -2 : keyed[s] != 0 ? 0 : -1;
      for (int i = starts[s]; kinds[s] != 1 && keyed[s] != 0 && i < starts[s + 1]; i++) {
        keyWidth[s] += LocalExchange.width(fields[flat[i]].dataType());
      }
    }
    final long expected = expectedRows * LocalExchange.perRow(keyWidth, bitmapped);
    JavaRDD<ColumnarBatch> batches =
        JavaRDD.fromRDD(scanned, ClassTag$.MODULE$.apply(ColumnarBatch.class));
    final int n = partitions;
    final int limit = Math.max(1, maxCandidates / n);
    List<long[]> parts =
        shuffled(
            batches.mapPartitionsToPair(
                (Iterator<ColumnarBatch> it) ->
                    KeyChunks.chunks(spec.rows(it), n, keyOf, bitmapped)),
            n,
            keyBudget,
            bits,
            listed,
            limit,
            bitmapped,
            expected,
            localBudget);
    return tallied(parts, bits, maxCandidates, true);
  }

  /**
   * The map side's chunks delivered to `n` partitions, each counted: where Spark runs in this
   * JVM, in memory where they fit, else through files ({@link LocalExchange}; `expected` bytes,
   * 0: unknown); else by a shuffle.
   */
  private static List<long[]> shuffled(
      JavaPairRDD<Integer, KeyChunks.Chunk> chunks,
      int n,
      long keyBudget,
      int bits,
      long listed,
      int limit,
      long bitmapped,
      long expected,
      long localBudget) {
    List<long[]> inMemory =
        LocalExchange.exchange(
            chunks,
            n,
            expected,
            localBudget,
            (Iterator<KeyChunks.Chunk> it) ->
                partition(KeyChunks.joined(it, keyBudget), bits, listed, limit, bitmapped));
    if (inMemory != null) {
      return inMemory;
    }
    return chunks
        .partitionBy(new HashPartitioner(n))
        .values()
        .mapPartitions(
            (Iterator<KeyChunks.Chunk> it) ->
                partition(KeyChunks.joined(it, keyBudget), bits, listed, limit, bitmapped))
        .collect();
  }

  /** The partitions' counts added up per key set (`shuffled`: they carry the rows read). */
  private static Packed tallied(List<long[]> parts, int bits, int maxCandidates, boolean shuffled) {
    final int sets = 1 << bits;
    long[] total = new long[sets];
    long[] distinct = new long[sets];
    long[] hidden = new long[sets];
    long overflow = 0;
    long read = shuffled ? 0 : -1;
    long[] counts = new long[sets];
    final int listedFrom = 3 * sets + 2;
    for (long[] p : parts) {
      read += shuffled ? p[3 * sets + 1] : 0;
      for (int s = 0; s < sets; s++) {
        total[s] += p[s];
        distinct[s] += p[sets + s];
        hidden[s] += p[2 * sets + s];
      }
      overflow |= p[3 * sets];
      for (int i = listedFrom; i < p.length; i++) {
        counts[set(p[i], bits)]++;
      }
    }
    for (int s = 0; s < sets; s++) {
      if (counts[s] > maxCandidates) {
        overflow |= 1L << s;
      }
    }
    int kept = 0;
    for (int s = 0; s < sets; s++) {
      kept += (overflow & (1L << s)) == 0 ? (int) counts[s] : 0;
    }
    long[] candidates = new long[kept];
    int at = 0;
    for (long[] p : parts) {
      for (int i = listedFrom; i < p.length; i++) {
        if ((overflow & (1L << set(p[i], bits))) == 0) {
          candidates[at++] = p[i];
        }
      }
    }
    for (int s = 0; s < sets; s++) {
      counts[s] = (overflow & (1L << s)) == 0 ? counts[s] : 0;
    }
    return new Packed(total, distinct, hidden, overflow, counts, candidates, read);
  }

  /** What {@link #summarizePacked} found, per key set (index 0 .. 2^bits - 1). */
  public static final class Packed {
    private final long[] rows;
    private final long[] distinct;
    private final long[] hidden;
    private final long overflow;
    private final long[] counts;
    final long[] candidates;
    private final long read;

    Packed(
        long[] rows,
        long[] distinct,
        long[] hidden,
        long overflow,
        long[] counts,
        long[] candidates,
        long read) {
      this.rows = rows;
      this.distinct = distinct;
      this.hidden = hidden;
      this.overflow = overflow;
      this.counts = counts;
      this.candidates = candidates;
      this.read = read;
    }

    /**
     * Every row the shuffle's map side read, null hashes or not (-1 when the input was shuffled
     * already, and filtered): the caller compares it with its scan's rows, so counts from
     * another version of the files (replaced between the two reads) are not taken as this one's.
     */
    public long read() {
      return read;
    }

    public long rows(int set) {
      return rows[set];
    }

    public long distinct(int set) {
      return distinct[set];
    }

    /** Keys that repeated hashes hid, found by the partitions that had the keys' bytes. */
    public long hidden(int set) {
      return hidden[set];
    }

    public boolean overflow(int set) {
      return (overflow & (1L << set)) != 0;
    }

    public long candidateCount() {
      return candidates.length;
    }

    /** The repeated hashes listed for one key set (0 when it overflowed). */
    public long candidateCount(int set) {
      return counts[set];
    }

    public Dataset<Row> candidates(SparkSession spark) {
      return new Summary(0, 0, false, candidates).candidates(spark);
    }
  }

  /**
   * One partition's {rows per set.., distinct per set.., hidden keys per set.., overflowing sets,
   * rows read (its tallies), repeated hashes...}, as the single element of an iterator. With its
   * keys' bytes, the partition checks its repeated hashes itself ({@link KeyCheck}) and lists
   * none; without them (no key carried, or past the budget) it lists them for the caller's check
   * (at most `limit` per set, see {@link HashCounts#of}).
   */
  static Iterator<long[]> partition(
      KeyChunks.Joined given, int bits, long listed, int limit, long bitmapped) {
    final int sets = 1 << bits;
    long[] fromBitmaps = new long[sets]; // rows counted in bitmaps
    long[] inBitmaps = new long[sets]; // distinct values among them
    KeyChunks.Joined part =
        given.bitmaps == null ? given : merged(given, bits, bitmapped, fromBitmaps);
    if (given.bitmaps != null) {
      for (int k = 0; k < given.bitmaps.size(); k++) {
        int s = set(given.bitmaps.order.get(k) << KeyBitmaps.SHIFT, bits);
        inBitmaps[s] += KeyBitmaps.count(given.bitmaps.words.get(k));
      }
    }
    if (given.set != null) {
      for (int c = 0; c < given.set.length; c++) {
        fromBitmaps[c] += given.set[c]; // column c holds set c's hashes
      }
    }
    long[] hidden = new long[sets];
    long[] counted;
    if (part.ends == null) {
      counted = HashCounts.of(part.hashes, bits, listed, limit);
    } else {
      long[] all = HashCounts.of(part.hashes, bits, listed, Integer.MAX_VALUE);
      long[] repeated = Arrays.copyOfRange(all, 2 * sets + 1, all.length);
      hidden = KeyCheck.hidden(part.hashes, part.ends, part.bytes, repeated, bits);
      counted = Arrays.copyOf(all, 2 * sets + 1); // checked here: nothing left to list
    }
    for (int s = 0; s < sets; s++) {
      counted[s] += fromBitmaps[s];
      counted[sets + s] += inBitmaps[s];
    }
    long[] out = new long[counted.length + sets + 1];
    System.arraycopy(counted, 0, out, 0, 2 * sets);
    System.arraycopy(hidden, 0, out, 2 * sets, sets);
    out[3 * sets] = counted[2 * sets]; // overflowing sets
    out[3 * sets + 1] = part.read;
    System.arraycopy(counted, 2 * sets + 1, out, 3 * sets + 2, counted.length - 2 * sets - 1);
    return Collections.singletonList(out).iterator();
  }

  /**
   * `part` less the values of the `bitmapped` sets whose block has a bitmap here: their bits are
   * set in it instead, and each is a row of its set in `rows`. A value also in another task's
   * bitmap, or repeated, then counts once. The values leaving have no key bytes (their sets are
   * never checked), so each kept value's end stays right.
   */
  static KeyChunks.Joined merged(KeyChunks.Joined part, int bits, long bitmapped, long[] rows) {
    long[] hashes = part.hashes;
    int[] ends = part.ends;
    int kept = 0;
    for (int i = 0; i < hashes.length; i++) {
      long h = hashes[i];
      int s = set(h, bits);
      long[] words = (bitmapped >>> s & 1) != 0 ? part.bitmaps.get(h >>> KeyBitmaps.SHIFT) : null;
      if (words != null) {
        KeyBitmaps.set(words, h);
        rows[s]++;
        continue;
      }
      hashes[kept] = h;
      if (ends != null) {
        ends[kept] = ends[i];
      }
      kept++;
    }
    if (kept == hashes.length) {
      return part;
    }
    return new KeyChunks.Joined(
        Arrays.copyOf(hashes, kept),
        ends == null ? null : Arrays.copyOf(ends, kept),
        part.bytes,
        part.read,
        part.bitmaps,
        part.set);
  }

  /** A partition's hashes from the rows of a plan of bigint columns: every non-null value. */
  static long[] read(Iterator<InternalRow> it) {
    long[] keys = new long[1 << 16];
    int n = 0;
    while (it.hasNext()) {
      InternalRow row = it.next();
      for (int c = 0; c < row.numFields(); c++) {
        if (row.isNullAt(c)) {
          continue;
        }
        if (n == keys.length) {
          keys = Arrays.copyOf(keys, keys.length * 2);
        }
        keys[n++] = row.getLong(c);
      }
    }
    return Arrays.copyOf(keys, n);
  }

  /**
   * How this JVM's key-set passes exchanged their chunks so far: {in memory, declined before the
   * pass (more than the budget expected), given up during it (past the budget), bytes held now,
   * through files (past the budget), bytes written to files}.
   */
  public static long[] localExchanges() {
    return LocalExchange.counts();
  }

  /** The key set a hash belongs to: its top `bits`. */
  static int set(long key, int bits) {
    return bits == 0 ? 0 : (int) (key >>> (64 - bits)); // a shift by 64 would be one by 0
  }
}
