package lineagequality;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Integer keys as bitmaps in {@link KeyHashes}' shuffle. A key set of one integer column is
 * shuffled as its values (they are their own hashes). Ids are mostly dense: 10M order ids fill
 * 153 blocks of 65,536 values. So a map task sets each value's bit in its block's bitmap (8 KiB)
 * instead of sending 8 bytes per row. The values of these key sets go to the partition of their
 * block, whether they travel in a bitmap or as values. The partition ORs a block's bitmaps and
 * sets the bits of that block's values, so a value that several tasks hold counts once.
 *
 * <p>Bounded both ways. A task makes at most {@link #MAX_BLOCKS} blocks (16 MiB) in all. Each key
 * set gets {@link #MIN_BLOCKS}, then one more per {@link #VALUES_PER_BLOCK} of its values in
 * bitmaps, so sparse keys stop making blocks early and cannot take a dense key's. Values of
 * other blocks travel as values. At the end, a block with fewer than {@link #DENSE} values (its
 * bitmap would cost more than they do) is sent as its values, each once.
 */
final class KeyBitmaps {
  static final int SHIFT = 16; // a block holds the values sharing all bits above these
  static final int WORDS = 1 << (SHIFT - 6);
  static final int MIN_BLOCKS = 256;
  static final int MAX_BLOCKS = 2048;
  static final int VALUES_PER_BLOCK = 512;
  static final int DENSE = WORDS; // 8 KiB of bitmap: as much as 1,024 values of 8 bytes
  private static final long NONE = -1L; // block ids are the top 48 bits: never all ones

  /** An open-addressing table of block ids to their bitmaps; grows as needed. */
  static final class Blocks {
    private long[] ids = new long[64];
    private int[] at = new int[64];
    final List<long[]> words = new ArrayList<>();
    final List<Long> order = new ArrayList<>();

    Blocks() {
      Arrays.fill(ids, NONE);
    }

    int size() {
      return order.size();
    }

    /** The bitmap of `block`, or null. */
    long[] get(long block) {
      int mask = ids.length - 1;
      for (int i = slot(block, mask); ; i = (i + 1) & mask) {
        if (ids[i] == block) {
          return words.get(at[i]);
        }
        if (ids[i] == NONE) {
          return null;
        }
      }
    }

    /** A new, empty bitmap for `block` (not yet in the table). */
    long[] add(long block) {
      if (2 * (order.size() + 1) > ids.length) {
        grow();
      }
      long[] bits = new long[WORDS];
      put(block, order.size());
      words.add(bits);
      order.add(block);
      return bits;
    }

    private void put(long block, int index) {
      int mask = ids.length - 1;
      int i = slot(block, mask);
      while (ids[i] != NONE) {
        i = (i + 1) & mask;
      }
      ids[i] = block;
      at[i] = index;
    }

    private void grow() {
      ids = new long[ids.length * 2];
      at = new int[ids.length];
      Arrays.fill(ids, NONE);
      for (int k = 0; k < order.size(); k++) {
        put(order.get(k), k);
      }
    }

    private static int slot(long block, int mask) {
      long m = block * 0x9E3779B97F4A7C15L;
      return (int) (m >>> 40) & mask;
    }
  }

  /** One map task's bitmaps, for the hash columns (key sets) marked in its mask. */
  static final class Collector {
    final Blocks blocks = new Blocks();
    private final List<Integer> columns = new ArrayList<>(); // each block's hash column
    final long[] set; // per hash column: values that went into a bitmap (repeats too)
    private final int[] made; // per hash column: blocks
    private long last = NONE;
    private long[] lastWords;

    Collector(int hashColumns) {
      set = new long[hashColumns];
      made = new int[hashColumns];
    }

    /** True when `h` (of hash column `column`) is now in a bitmap; false: it travels as is. */
    boolean add(int column, long h) {
      long block = h >>> SHIFT; // its top bits are the key set's slot: no two columns share one
      long[] w = block == last ? lastWords : blocks.get(block);
      if (w == null) {
        if (blocks.size() >= MAX_BLOCKS
            || made[column] >= Math.max(MIN_BLOCKS, set[column] / VALUES_PER_BLOCK)) {
          return false;
        }
        w = blocks.add(block);
        columns.add(column);
        made[column]++;
      }
      last = block;
      lastWords = w;
      KeyBitmaps.set(w, h);
      set[column]++;
      return true;
    }

    int column(int index) {
      return columns.get(index);
    }
  }

  /** The values a sparse block holds, each once, in order. */
  static long[] values(long block, long[] words) {
    long[] out = new long[count(words)];
    int n = 0;
    for (int i = 0; i < WORDS; i++) {
      for (long w = words[i]; w != 0; w &= w - 1) {
        out[n++] = (block << SHIFT) | ((long) i << 6) | Long.numberOfTrailingZeros(w);
      }
    }
    return out;
  }

  static int count(long[] words) {
    int n = 0;
    for (long w : words) {
      n += Long.bitCount(w);
    }
    return n;
  }

  /** Sets the bit of `h` in `words` (its block's bitmap). */
  static void set(long[] words, long h) {
    int bit = (int) h & ((1 << SHIFT) - 1);
    words[bit >>> 6] |= 1L << bit;
  }

  private KeyBitmaps() {}
}
