package lineagequality;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;

import scala.reflect.ClassTag$;

/**
 * Uniqueness on 64-bit key hashes (see lineage_quality.engine.uniqueness): the input is one
 * non-null bigint column, already hash-partitioned on it, so equal hashes meet in one partition.
 * Each partition counts its rows and distinct hashes in a primitive open-addressing set (no
 * generic aggregation, no boxing) and lists the hashes seen more than once: the only places
 * where two rows can share a key, checked exactly by the caller. A partition with more than its
 * share of `maxCandidates` such hashes stops listing them and says so (the caller then falls
 * back), so the driver never collects much more than `maxCandidates` hashes.
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
    JavaRDD<InternalRow> rows =
        JavaRDD.fromRDD(
            hashes.queryExecution().toRdd(), ClassTag$.MODULE$.apply(InternalRow.class));
    // each partition lists at most its share, so what reaches the driver stays near the limit
    final int limit = Math.max(1, maxCandidates / Math.max(1, rows.getNumPartitions()));
    List<long[]> parts =
        rows.mapPartitions((Iterator<InternalRow> it) -> partition(it, limit)).collect();
    long total = 0;
    long distinct = 0;
    boolean overflow = false;
    int count = 0;
    for (long[] p : parts) {
      total += p[0];
      distinct += p[1];
      overflow |= p[2] != 0;
      count += p.length - 3;
    }
    if (count > maxCandidates) {
      overflow = true;
    }
    long[] candidates = new long[overflow ? 0 : count];
    if (!overflow) {
      int at = 0;
      for (long[] p : parts) {
        System.arraycopy(p, 3, candidates, at, p.length - 3);
        at += p.length - 3;
      }
    }
    return new Summary(total, distinct, overflow, candidates);
  }

  /** {rows, distinct, overflow (0/1), repeated hashes...} of one partition. */
  static Iterator<long[]> partition(Iterator<InternalRow> it, int limit) {
    LongCounter set = new LongCounter();
    long rows = 0;
    while (it.hasNext()) {
      set.add(it.next().getLong(0));
      rows++;
    }
    long[] repeated = set.repeated(limit);
    boolean overflow = repeated == null;
    int n = overflow ? 0 : repeated.length;
    long[] out = new long[3 + n];
    out[0] = rows;
    out[1] = set.size();
    out[2] = overflow ? 1 : 0;
    if (!overflow) {
      System.arraycopy(repeated, 0, out, 3, n);
    }
    return Collections.singletonList(out).iterator();
  }

  /** An open-addressing set of longs that remembers which were added more than once. */
  static final class LongCounter {
    private long[] keys = new long[1 << 16];
    private byte[] state = new byte[1 << 16]; // 0 empty, 1 seen once, 2 seen again
    private int size;
    private int repeated;

    void add(long key) {
      if (size * 2 >= keys.length) {
        grow();
      }
      int mask = keys.length - 1;
      int i = slot(key, mask);
      while (state[i] != 0) {
        if (keys[i] == key) {
          if (state[i] == 1) {
            state[i] = 2;
            repeated++;
          }
          return;
        }
        i = (i + 1) & mask;
      }
      keys[i] = key;
      state[i] = 1;
      size++;
    }

    long size() {
      return size;
    }

    /** The keys added more than once, or null when there are more than `limit`. */
    long[] repeated(int limit) {
      if (repeated > limit) {
        return null;
      }
      long[] out = new long[repeated];
      int at = 0;
      for (int i = 0; i < keys.length; i++) {
        if (state[i] == 2) {
          out[at++] = keys[i];
        }
      }
      return out;
    }

    private static int slot(long key, int mask) {
      // the keys are hashes already, but of a hash-partitioned input: mix again so the low
      // bits used here are not the ones the partitioning fixed
      long h = key * 0x9E3779B97F4A7C15L;
      return (int) (h ^ (h >>> 32)) & mask;
    }

    private void grow() {
      long[] oldKeys = keys;
      byte[] oldState = state;
      keys = new long[oldKeys.length * 2];
      state = new byte[oldKeys.length * 2];
      int mask = keys.length - 1;
      for (int j = 0; j < oldKeys.length; j++) {
        if (oldState[j] != 0) {
          int i = slot(oldKeys[j], mask);
          while (state[i] != 0) {
            i = (i + 1) & mask;
          }
          keys[i] = oldKeys[j];
          state[i] = oldState[j];
        }
      }
    }
  }
}
