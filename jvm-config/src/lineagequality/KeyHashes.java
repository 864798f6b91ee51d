package lineagequality;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;

import scala.Tuple2;
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
 * set, and everything is counted per key set ({@link #summarizePacked}).
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
    final int sets = 1 << bits;
    JavaRDD<InternalRow> rows =
        JavaRDD.fromRDD(
            hashes.queryExecution().toRdd(), ClassTag$.MODULE$.apply(InternalRow.class));
    final int n = partitions > 0 ? partitions : rows.getNumPartitions();
    // each partition lists at most its share, so what reaches the driver stays near the limit
    final int limit = Math.max(1, maxCandidates / Math.max(1, n));
    List<long[]> parts;
    if (partitions > 0) {
      parts =
          rows.mapPartitionsToPair((Iterator<InternalRow> it) -> chunks(it, n))
              .partitionBy(new HashPartitioner(n))
              .values()
              .mapPartitions((Iterator<long[]> it) -> partition(joined(it), bits, listed, limit))
              .collect();
    } else {
      parts =
          rows.mapPartitions((Iterator<InternalRow> it) -> partition(read(it), bits, listed, limit))
              .collect();
    }
    long[] total = new long[sets];
    long[] distinct = new long[sets];
    long overflow = 0;
    long[] counts = new long[sets];
    for (long[] p : parts) {
      for (int s = 0; s < sets; s++) {
        total[s] += p[s];
        distinct[s] += p[sets + s];
      }
      overflow |= p[2 * sets];
      for (int i = 2 * sets + 1; i < p.length; i++) {
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
      for (int i = 2 * sets + 1; i < p.length; i++) {
        if ((overflow & (1L << set(p[i], bits))) == 0) {
          candidates[at++] = p[i];
        }
      }
    }
    for (int s = 0; s < sets; s++) {
      counts[s] = (overflow & (1L << s)) == 0 ? counts[s] : 0;
    }
    return new Packed(total, distinct, overflow, counts, candidates);
  }

  /** What {@link #summarizePacked} found, per key set (index 0 .. 2^bits - 1). */
  public static final class Packed {
    private final long[] rows;
    private final long[] distinct;
    private final long overflow;
    private final long[] counts;
    final long[] candidates;

    Packed(long[] rows, long[] distinct, long overflow, long[] counts, long[] candidates) {
      this.rows = rows;
      this.distinct = distinct;
      this.overflow = overflow;
      this.counts = counts;
      this.candidates = candidates;
    }

    public long rows(int set) {
      return rows[set];
    }

    public long distinct(int set) {
      return distinct[set];
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

  /** One partition's counts (see {@link HashCounts#of}), as the single element of an iterator. */
  static Iterator<long[]> partition(long[] keys, int bits, long listed, int limit) {
    return Collections.singletonList(HashCounts.of(keys, bits, listed, limit)).iterator();
  }

  private static final int CHUNK = 4096;

  private static final InternalRow EMPTY = new GenericInternalRow(0);

  /**
   * One map task's hashes as (target partition, array of its hashes), CHUNK at a time, lazily:
   * a task holds one buffer per target partition, not its whole input. Every non-null column
   * of a row is a hash: several key sets' hashes travel in one row, not exploded into a row
   * each (a generator and a row per hash cost more than reading the hashes).
   */
  static Iterator<Tuple2<Integer, long[]>> chunks(Iterator<InternalRow> it, int partitions) {
    return new Iterator<Tuple2<Integer, long[]>>() {
      private final long[][] buffers = new long[partitions][CHUNK];
      private final int[] filled = new int[partitions];
      private int flushed = 0; // past the input: the partial buffers handed out so far
      private Tuple2<Integer, long[]> next;
      private InternalRow row = EMPTY;
      private int column = 0; // the next column of `row` to read

      @Override
      public boolean hasNext() {
        while (next == null && (column < row.numFields() || it.hasNext())) {
          if (column == row.numFields()) {
            row = it.next();
            column = 0;
          }
          int c = column++;
          if (row.isNullAt(c)) {
            continue;
          }
          long h = row.getLong(c);
          // mixed: an integer key's values are their own hashes, and their low bits alone
          // would follow whatever pattern the values have
          long m = h * 0x9E3779B97F4A7C15L;
          // the top 32 mixed bits scaled to [0, partitions): a multiply, not a division
          int p = (int) ((((m ^ (m >>> 29)) >>> 32) * partitions) >>> 32);
          buffers[p][filled[p]++] = h;
          if (filled[p] == CHUNK) {
            next = new Tuple2<>(p, buffers[p]);
            buffers[p] = new long[CHUNK];
            filled[p] = 0;
          }
        }
        while (next == null && flushed < partitions) {
          int p = flushed++;
          if (filled[p] > 0) {
            next = new Tuple2<>(p, Arrays.copyOf(buffers[p], filled[p]));
          }
        }
        return next != null;
      }

      @Override
      public Tuple2<Integer, long[]> next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        Tuple2<Integer, long[]> out = next;
        next = null;
        return out;
      }
    };
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

  /** A partition's hashes from the arrays the map tasks sent it. */
  static long[] joined(Iterator<long[]> it) {
    List<long[]> arrays = new ArrayList<>();
    int n = 0;
    while (it.hasNext()) {
      long[] a = it.next();
      arrays.add(a);
      n += a.length;
    }
    long[] keys = new long[n];
    int at = 0;
    for (long[] a : arrays) {
      System.arraycopy(a, 0, keys, at, a.length);
      at += a.length;
    }
    return keys;
  }

  /** The key set a hash belongs to: its top `bits`. */
  static int set(long key, int bits) {
    return bits == 0 ? 0 : (int) (key >>> (64 - bits)); // a shift by 64 would be one by 0
  }
}
