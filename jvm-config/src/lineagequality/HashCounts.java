package lineagequality;

import java.util.Arrays;

/**
 * What one partition of {@link KeyHashes}' shuffle holds: per key set (the top `bits` of each
 * hash), its rows and distinct hashes, and the hashes seen more than once (only for the sets
 * in the bit mask `listed`; past `limit` of them a set lists none and is flagged).
 *
 * <p>The hashes are distributed into buckets of about 256 by the top bits of a mixed copy, then
 * each bucket is counted in a small open-addressing table that stays in the cache. Equal hashes
 * share a bucket. One sort of the partition's million hashes missed the cache on most steps and
 * was 3-5x slower (measured: 1.25M hashes, 120 ms sorted, 65 ms sorted per bucket, 22 ms here).
 * A bucket with too many hashes (a key repeated on most rows) or too long probes (hashes crafted
 * to share table slots) is sorted instead, so the worst case stays a sort.
 */
public final class HashCounts {
  private static final long BUCKET_MIX = 0xC2B2AE3D27D4EB4FL;
  // a different multiplier than the bucket's and the shuffle's (KeyHashes.chunks): the hashes
  // of one bucket of one partition agree on those bits
  private static final long SLOT_MIX = 0xFF51AFD7ED558CCDL;
  private static final int SORTED_FROM = 1 << 16;
  private static final int MAX_PROBES_PER_HASH = 16;

  private final int bits;
  private final long listed;
  private final int limit;
  private final long[] rows;
  private final long[] distinct;
  private final int[] repeats;
  private long overflow;
  private long[] repeated = new long[16];
  private int found;
  private long[] table = new long[0];
  private int[] times = new int[0]; // 0: an empty slot
  // the slots a bucket filled, in the order it filled them: read back instead of sweeping the
  // whole table (2-4 slots per hash), which took ~45 % of the counting
  // (bench/profile_hash_counts.py: 9-11 ms -> 5-6 ms for 625,000 hashes)
  private int[] filled = new int[0];

  private HashCounts(int bits, long listed, int limit) {
    this.bits = bits;
    this.listed = listed;
    this.limit = limit;
    int sets = 1 << bits;
    this.rows = new long[sets];
    this.distinct = new long[sets];
    this.repeats = new int[sets];
  }

  /** {rows per set.., distinct per set.., overflowing sets (a bit mask), repeated hashes...}. */
  public static long[] of(long[] keys, int bits, long listed, int limit) {
    HashCounts counts = new HashCounts(bits, listed, limit);
    counts.count(keys);
    return counts.summary();
  }

  private void count(long[] keys) {
    final int n = keys.length;
    final int bucketBits = Math.min(16, 31 - Integer.numberOfLeadingZeros(Math.max(1, n >>> 8)));
    if (bucketBits == 0) {
      sorted(keys.clone(), 0, n); // the caller's order stays: KeyCheck finds rows by position
      return;
    }
    final int shift = 64 - bucketBits;
    final int buckets = 1 << bucketBits;
    int[] start = new int[buckets + 1];
    for (long k : keys) {
      start[(int) ((k * BUCKET_MIX) >>> shift) + 1]++;
    }
    for (int b = 0; b < buckets; b++) {
      start[b + 1] += start[b];
    }
    int[] at = Arrays.copyOf(start, buckets);
    long[] out = new long[n];
    for (long k : keys) {
      out[at[(int) ((k * BUCKET_MIX) >>> shift)]++] = k;
    }
    for (int b = 0; b < buckets; b++) {
      int from = start[b];
      int to = start[b + 1];
      if (to - from >= SORTED_FROM || !hashed(out, from, to)) {
        sorted(out, from, to);
      }
    }
  }

  /** Counts keys[from, to) in the table; false (nothing counted) when probes grow too long. */
  private boolean hashed(long[] keys, int from, int to) {
    final int size = to - from;
    if (size == 0) {
      return true;
    }
    final int capacity = Integer.highestOneBit(Math.max(1, 2 * size - 1)) << 1; // >= 2 * size
    if (table.length < capacity) {
      table = new long[capacity];
      times = new int[capacity];
    }
    if (filled.length < size) {
      filled = new int[Math.max(size, 2 * filled.length)];
    }
    final int mask = capacity - 1;
    final int tableShift = 64 - Integer.numberOfTrailingZeros(capacity);
    long probes = 0;
    final long maxProbes = (long) MAX_PROBES_PER_HASH * size;
    int used = 0;
    for (int i = from; i < to; i++) {
      long k = keys[i];
      int slot = (int) ((k * SLOT_MIX) >>> tableShift);
      while (times[slot] != 0 && table[slot] != k) {
        slot = (slot + 1) & mask;
        if (++probes > maxProbes) {
          clear(used);
          return false;
        }
      }
      if (times[slot] == 0) {
        table[slot] = k;
        filled[used++] = slot;
      }
      times[slot]++;
    }
    for (int j = 0; j < used; j++) {
      int slot = filled[j];
      add(table[slot], times[slot]);
      times[slot] = 0;
    }
    return true;
  }

  /** The table empty again, given up on: only the `used` slots the bucket filled are reset. */
  private void clear(int used) {
    for (int j = 0; j < used; j++) {
      times[filled[j]] = 0;
    }
  }

  private void sorted(long[] keys, int from, int to) {
    Arrays.sort(keys, from, to);
    for (int i = from; i < to; ) {
      int j = i + 1;
      while (j < to && keys[j] == keys[i]) {
        j++;
      }
      add(keys[i], j - i);
      i = j;
    }
  }

  /** One distinct hash seen `seen` times. */
  private void add(long key, int seen) {
    int s = KeyHashes.set(key, bits);
    rows[s] += seen;
    distinct[s]++;
    if (seen > 1 && (listed & (1L << s)) != 0 && (overflow & (1L << s)) == 0) {
      if (++repeats[s] > limit) {
        overflow |= 1L << s; // its hashes listed so far are dropped in summary()
      } else {
        if (found == repeated.length) {
          repeated = Arrays.copyOf(repeated, found * 2);
        }
        repeated[found++] = key;
      }
    }
  }

  private long[] summary() {
    final int sets = 1 << bits;
    long[] out = new long[2 * sets + 1 + found];
    System.arraycopy(rows, 0, out, 0, sets);
    System.arraycopy(distinct, 0, out, sets, sets);
    out[2 * sets] = overflow;
    int at = 2 * sets + 1;
    for (int k = 0; k < found; k++) {
      if ((overflow & (1L << KeyHashes.set(repeated[k], bits))) == 0) {
        out[at++] = repeated[k];
      }
    }
    return Arrays.copyOf(out, at);
  }
}
