package lineagequality;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * The exact check of repeated hashes inside the partition that found them, on the key bytes
 * that travelled with the hashes ({@link KeyChunks}): every row of a hash is in that partition,
 * so the keys under a hash seen more than once can be told apart here. Keys are compared as the
 * bytes of their row (the caller normalizes what grouping treats as equal, such as -0.0 and
 * NaN, before the bytes are taken).
 */
final class KeyCheck {
  private KeyCheck() {}

  /** Past this many distinct keys under one hash (crafted collisions), a hash set takes over. */
  private static final int COMPARED_PAIRWISE = 32;

  private static final int FILTER_SHIFT = 18;
  private static final int FILTER_BITS = 1 << FILTER_SHIFT; // 32 KiB
  private static final long FILTER_MIX = 0x9FB21C651E98DF25L;

  /**
   * Per key set (the top `bits` of a hash), the keys its repeated hashes hid: for each hash of
   * `repeated`, its distinct keys - 1.
   */
  static long[] hidden(long[] hashes, int[] ends, byte[] bytes, long[] repeated, int bits) {
    final int n = hashes.length;
    final long[] sorted = repeated.clone();
    Arrays.sort(sorted);
    final int r = sorted.length;
    long[] hidden = new long[1 << bits];
    if (r == 0) {
      return hidden;
    }
    // a bit per (mixed) hash value: most rows are ruled out before the binary search
    long[] maybe = new long[FILTER_BITS / 64];
    for (long h : sorted) {
      int bit = (int) ((h * FILTER_MIX) >>> (64 - FILTER_SHIFT));
      maybe[bit >>> 6] |= 1L << bit;
    }
    // the rows of each repeated hash, grouped by its rank (a counting sort)
    int[] rank = new int[n];
    int[] start = new int[r + 1];
    for (int i = 0; i < n; i++) {
      long h = hashes[i];
      int bit = (int) ((h * FILTER_MIX) >>> (64 - FILTER_SHIFT));
      boolean keyed = ends[i] != start(ends, i); // rows of unchecked sets carry none
      int k = keyed && (maybe[bit >>> 6] & (1L << bit)) != 0 ? Arrays.binarySearch(sorted, h) : -1;
      rank[i] = k;
      if (k >= 0) {
        start[k + 1]++;
      }
    }
    for (int k = 0; k < r; k++) {
      start[k + 1] += start[k];
    }
    int[] at = Arrays.copyOf(start, r);
    int[] rows = new int[start[r]];
    for (int i = 0; i < n; i++) {
      if (rank[i] >= 0) {
        rows[at[rank[i]]++] = i;
      }
    }
    for (int k = 0; k < r; k++) {
      hidden[KeyHashes.set(sorted[k], bits)] += keys(rows, start[k], start[k + 1], ends, bytes) - 1;
    }
    return hidden;
  }

  /** The distinct keys among rows[from, to). */
  private static int keys(int[] rows, int from, int to, int[] ends, byte[] bytes) {
    int[] seen = new int[Math.min(COMPARED_PAIRWISE, to - from)];
    int distinct = 0;
    Set<ByteBuffer> many = null;
    for (int j = from; j < to; j++) {
      int row = rows[j];
      int a = start(ends, row);
      int b = ends[row];
      if (a == b) {
        throw new IllegalStateException("a repeated hash arrived without its key");
      }
      if (many != null) {
        many.add(ByteBuffer.wrap(bytes, a, b - a));
        continue;
      }
      boolean found = false;
      for (int s = 0; s < distinct && !found; s++) {
        int other = seen[s];
        found = Arrays.equals(bytes, a, b, bytes, start(ends, other), ends[other]);
      }
      if (found) {
        continue;
      }
      if (distinct == seen.length) { // many keys under one hash: compare through a set
        many = new HashSet<>();
        for (int s = 0; s < distinct; s++) {
          int c = start(ends, seen[s]);
          many.add(ByteBuffer.wrap(bytes, c, ends[seen[s]] - c));
        }
        many.add(ByteBuffer.wrap(bytes, a, b - a));
        continue;
      }
      seen[distinct++] = row;
    }
    return many != null ? many.size() : distinct;
  }

  /** Where row `row`'s key begins in the partition's bytes (it ends at ends[row]). */
  private static int start(int[] ends, int row) {
    return row == 0 ? 0 : ends[row - 1];
  }
}
