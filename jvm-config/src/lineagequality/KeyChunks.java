package lineagequality;

import java.io.Serializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;

import scala.Tuple2;

/**
 * What {@link KeyHashes}' shuffle moves: per target partition, arrays of hashes and, for the key
 * sets whose repeated hashes must be checked, the bytes of each row's key beside its hash. With
 * the keys there, the partition that finds a hash repeated compares the keys itself, and the
 * data is not read a second time to check them.
 */
final class KeyChunks {
  private KeyChunks() {}

  static final int CHUNK = 4096;
  // a buffer is sent once its keys reach this, however few: a map task's buffers (one per
  // target partition) stay small with long keys too
  private static final int FLUSH_BYTES = 1 << 16;
  // 504 KiB: under half a 1 MiB G1 region, so a chunk's words are not a humongous object
  private static final int BITMAPS_PER_CHUNK = 63;
  private static final InternalRow EMPTY = new GenericInternalRow(0);

  /**
   * What travels to one partition: up to CHUNK hashes (`ends` null when none carries a key);
   * or bitmaps ({@link KeyBitmaps}: `hashes` their block ids, `words` their bits); or a tally of
   * one map task (no hashes): the rows it read, and per hash column the values it put in
   * bitmaps.
   */
  static final class Chunk implements Serializable {
    private static final long serialVersionUID = 2L;
    final long[] hashes;
    final int[] ends; // row i's key is bytes[ends[i - 1], ends[i]) (empty for a key set unchecked)
    final byte[] bytes;
    final long[] words; // bitmaps: WORDS longs per block of `hashes`
    final long read; // a tally: rows read (-1 otherwise)
    final long[] set; // a tally: per hash column, values in bitmaps

    Chunk(long[] hashes, int[] ends, byte[] bytes) {
      this(hashes, ends, bytes, null, -1, null);
    }

    Chunk(long[] hashes, int[] ends, byte[] bytes, long[] words, long read, long[] set) {
      this.hashes = hashes;
      this.ends = ends;
      this.bytes = bytes;
      this.words = words;
      this.read = read;
      this.set = set;
    }

    static Chunk bitmaps(long[] blocks, long[] words) {
      return new Chunk(blocks, null, null, words, -1, null);
    }

    static Chunk tally(long read, long[] set) {
      return new Chunk(new long[0], null, null, null, read, set);
    }

    boolean isTally() {
      return read >= 0;
    }

    boolean isBitmaps() {
      return words != null;
    }
  }

  /**
   * One map task's rows, one at a time: per hash column, whether the row has a hash there, the
   * hash, and its key's bytes into a buffer ({@link #of}: rows of a plan; {@link KeyColumns}:
   * a scan's column batches).
   */
  interface Rows {
    /** Moves to the next row; false past the last (and again if asked again). */
    boolean advance();

    boolean isNull(int c);

    long hash(int c);

    /** `h` into `b` with column c's key. */
    void addKey(Buffer b, long h, int c);
  }

  /**
   * Rows of a plan: columns 0 .. keyOf.length - 1 are hashes; where keyOf[c] >= 0, columns
   * keyOf[c] .. keyOf[c] + keyFields[c] - 1 are that hash's key (`fixed`: which columns are
   * fixed-width in an UnsafeRow).
   */
  static Rows of(Iterator<InternalRow> it, int[] keyOf, int[] keyFields, boolean[] fixed) {
    return new Rows() {
      private InternalRow row = EMPTY;

      @Override
      public boolean advance() {
        if (!it.hasNext()) {
          return false;
        }
        row = it.next();
        return true;
      }

      @Override
      public boolean isNull(int c) {
        return row.isNullAt(c);
      }

      @Override
      public long hash(int c) {
        return row.getLong(c);
      }

      @Override
      public void addKey(Buffer b, long h, int c) {
        b.add(h, (UnsafeRow) row, keyOf[c], keyFields[c], fixed);
      }
    };
  }

  /** `value` (>= 0) as a varint at bytes[at]; the position after it (a key part's length). */
  static int varint(byte[] bytes, int at, int value) {
    for (int v = value; ; v >>>= 7) {
      if ((v & ~0x7F) == 0) {
        bytes[at++] = (byte) v;
        return at;
      }
      bytes[at++] = (byte) ((v & 0x7F) | 0x80);
    }
  }

  /** One buffer of a map task for one target partition. */
  static final class Buffer {
    long[] hashes = new long[CHUNK];
    int[] ends;
    byte[] bytes;
    int filled;

    Buffer(boolean keys) {
      ends = keys ? new int[CHUNK] : null;
      bytes = keys ? new byte[1 << 14] : null;
    }

    Chunk take() {
      int used = used();
      Chunk out =
          new Chunk(
              filled == CHUNK ? hashes : Arrays.copyOf(hashes, filled),
              ends == null ? null : Arrays.copyOf(ends, filled),
              bytes == null ? null : Arrays.copyOf(bytes, used));
      hashes = new long[CHUNK];
      filled = 0;
      return out;
    }

    void add(long h) {
      if (ends != null) {
        ends[filled] = filled == 0 ? 0 : ends[filled - 1];
      }
      hashes[filled++] = h;
    }

    /**
     * `h` with its key: columns [first, first + count) of `row`, each fixed-width one as its 8
     * bytes, each other as its length (a varint) and bytes, so no two keys share an encoding.
     */
    void add(long h, UnsafeRow row, int first, int count, boolean[] fixed) {
      int at = filled == 0 ? 0 : ends[filled - 1];
      for (int k = first; k < first + count; k++) {
        long slot = row.getLong(k); // a fixed-width value, or a variable one's offset and size
        int size = fixed[k] ? 8 : (int) slot;
        room(at + size + 5);
        if (fixed[k]) {
          Platform.putLong(bytes, Platform.BYTE_ARRAY_OFFSET + at, slot);
        } else {
          at = varint(bytes, at, size);
          Platform.copyMemory(
              row.getBaseObject(),
              row.getBaseOffset() + (slot >>> 32),
              bytes,
              Platform.BYTE_ARRAY_OFFSET + at,
              size);
        }
        at += size;
      }
      ends[filled] = at;
      hashes[filled++] = h;
    }

    /** `h` with its key's bytes, src[from, to), encoded already. */
    void add(long h, byte[] src, int from, int to) {
      int at = filled == 0 ? 0 : ends[filled - 1];
      room(at + to - from);
      System.arraycopy(src, from, bytes, at, to - from);
      ends[filled] = at + to - from;
      hashes[filled++] = h;
    }

    int used() {
      return filled == 0 || ends == null ? 0 : ends[filled - 1];
    }

    private void room(int needed) {
      if (needed > bytes.length) {
        bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, needed));
      }
    }
  }

  /**
   * One map task's rows as (target partition, chunk), lazily: a task holds one buffer per
   * target partition, not its whole input. A row has keyOf.length hash columns (each hash is
   * shuffled); where keyOf[c] >= 0, column c's key bytes travel with its hash. The values of
   * the hash columns in the mask `bitmapped`
   * (integer keys, their own hashes) go to the partition of their block, most of them in
   * bitmaps ({@link KeyBitmaps}). Last comes a tally of the task, bound for partition 0: the
   * rows it read, which the caller compares with the rows its other scan read, and the values
   * it put in bitmaps.
   */
  static Iterator<Tuple2<Integer, Chunk>> chunks(
      Rows rows, int partitions, int[] keyOf, long bitmapped) {
    final boolean keys = Arrays.stream(keyOf).anyMatch(k -> k >= 0);
    final KeyBitmaps.Collector bitmaps =
        bitmapped == 0 ? null : new KeyBitmaps.Collector(keyOf.length);
    return new Iterator<Tuple2<Integer, Chunk>>() {
      private final Buffer[] buffers = new Buffer[partitions];
      private int flushed = 0; // past the input: the partial buffers handed out so far
      private long read = 0; // rows of the input so far
      // past the buffers: bitmaps, one partition at a time, then the tally
      private final ArrayDeque<Tuple2<Integer, Chunk>> pending = new ArrayDeque<>();
      private int tailAt = 0;
      private boolean tallied = false;
      private int[] byPartition; // block indexes by partition, and where each one's start
      private int[] from;
      private Tuple2<Integer, Chunk> next;
      private int column = keyOf.length; // the next hash column of the row to read


      @Override
      public boolean hasNext() {
        while (next == null) {
          if (column == keyOf.length) {
            if (!rows.advance()) {
              break;
            }
            read++;
            column = 0;
          }
          int c = column++;
          if (rows.isNull(c)) {
            continue;
          }
          long h = rows.hash(c);
          boolean byBlock = (bitmapped >>> c & 1) != 0;
          if (byBlock && bitmaps.add(c, h)) {
            continue;
          }
          int p = partition(byBlock ? h >>> KeyBitmaps.SHIFT : h, partitions);
          Buffer b = buffers[p];
          if (b == null) { // made on first use: a task with few rows holds few buffers
            b = buffers[p] = new Buffer(keys);
          }
          if (keyOf[c] < 0) {
            b.add(h);
          } else {
            rows.addKey(b, h, c);
          }
          if (b.filled == CHUNK || b.used() >= FLUSH_BYTES) {
            next = new Tuple2<>(p, b.take());
          }
        }
        while (next == null && flushed < partitions) {
          int p = flushed++;
          if (buffers[p] != null && buffers[p].filled > 0) {
            next = new Tuple2<>(p, buffers[p].take());
          }
        }
        if (next == null) {
          next = tailNext();
        }
        return next != null;
      }

      /**
       * The next chunk past the input and the buffers: each partition's bitmaps (a sparse
       * block's as its values), one partition at a time, each block's bitmap released as it
       * is copied; then the tally.
       */
      private Tuple2<Integer, Chunk> tailNext() {
        while (pending.isEmpty() && tailAt < partitions) {
          pend(tailAt++);
        }
        if (!pending.isEmpty()) {
          return pending.poll();
        }
        if (!tallied) {
          tallied = true;
          if (read > 0) {
            return new Tuple2<>(0, Chunk.tally(read, bitmaps == null ? null : bitmaps.set));
          }
        }
        return null;
      }

      /** Partition p's bitmaps and sparse blocks' values, as chunks into `pending`. */
      private void pend(int p) {
        if (bitmaps == null) {
          return;
        }
        if (byPartition == null) { // block indexes grouped by their partition (counting sort)
          KeyBitmaps.Blocks blocks = bitmaps.blocks;
          byPartition = new int[blocks.size()];
          from = new int[partitions + 1];
          int[] target = new int[blocks.size()];
          for (int k = 0; k < target.length; k++) {
            target[k] = partition(blocks.order.get(k), partitions);
            from[target[k] + 1]++;
          }
          for (int q = 0; q < partitions; q++) {
            from[q + 1] += from[q];
          }
          int[] at = Arrays.copyOf(from, partitions);
          for (int k = 0; k < target.length; k++) {
            byPartition[at[target[k]]++] = k;
          }
        }
        KeyBitmaps.Blocks blocks = bitmaps.blocks;
        long[] ids = new long[0];
        long[] words = new long[0];
        long[] sparse = new long[0];
        int dense = 0;
        int values = 0;
        for (int j = from[p]; j < from[p + 1]; j++) {
          int k = byPartition[j];
          long block = blocks.order.get(k);
          long[] bits = blocks.words.set(k, null); // released once copied
          if (KeyBitmaps.count(bits) < KeyBitmaps.DENSE) {
            long[] mine = KeyBitmaps.values(block, bits);
            bitmaps.set[bitmaps.column(k)] -= mine.length; // counted where they land
            if (values + mine.length > sparse.length) {
              sparse = Arrays.copyOf(sparse, Math.max(2 * sparse.length, values + mine.length));
            }
            System.arraycopy(mine, 0, sparse, values, mine.length);
            values += mine.length;
            continue;
          }
          if (dense == 0) {
            ids = new long[BITMAPS_PER_CHUNK];
            words = new long[BITMAPS_PER_CHUNK * KeyBitmaps.WORDS];
          }
          ids[dense] = block;
          System.arraycopy(bits, 0, words, dense * KeyBitmaps.WORDS, KeyBitmaps.WORDS);
          if (++dense == BITMAPS_PER_CHUNK) {
            pending.add(new Tuple2<>(p, Chunk.bitmaps(ids, words)));
            dense = 0;
          }
        }
        if (dense > 0) {
          pending.add(
              new Tuple2<>(
                  p,
                  Chunk.bitmaps(
                      Arrays.copyOf(ids, dense),
                      Arrays.copyOf(words, dense * KeyBitmaps.WORDS))));
        }
        if (values > 0) { // each key empty: these key sets are never checked
          long[] hashes = Arrays.copyOf(sparse, values);
          pending.add(
              new Tuple2<>(
                  p,
                  new Chunk(hashes, keys ? new int[values] : null, keys ? new byte[0] : null)));
        }
      }

      @Override
      public Tuple2<Integer, Chunk> next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        Tuple2<Integer, Chunk> out = next;
        next = null;
        return out;
      }
    };
  }

  /** The partition of a hash, or of an integer key's block: mixed, then scaled. */
  static int partition(long h, int partitions) {
    // mixed: an integer key's values are their own hashes, and their low bits alone would
    // follow whatever pattern the values have
    long m = h * 0x9E3779B97F4A7C15L;
    // the top 32 mixed bits scaled to [0, partitions): a multiply, not a division
    return (int) ((((m ^ (m >>> 29)) >>> 32) * partitions) >>> 32);
  }

  /**
   * A partition's hashes, its keys' bytes (null when none came or past the budget), its
   * bitmaps (ORed per block, null when none came), and what the map tasks' tallies sent it: the
   * rows they read (-1: not counted) and per hash column the values they put in bitmaps.
   */
  static final class Joined {
    final long[] hashes;
    final int[] ends;
    final byte[] bytes;
    final long read;
    final KeyBitmaps.Blocks bitmaps;
    final long[] set;

    Joined(long[] hashes, int[] ends, byte[] bytes, long read) {
      this(hashes, ends, bytes, read, null, null);
    }

    Joined(
        long[] hashes,
        int[] ends,
        byte[] bytes,
        long read,
        KeyBitmaps.Blocks bitmaps,
        long[] set) {
      this.hashes = hashes;
      this.ends = ends;
      this.bytes = bytes;
      this.read = read;
      this.bitmaps = bitmaps;
      this.set = set;
    }
  }

  /**
   * The chunks a partition received, joined. Key bytes are kept while they fit `budget`; past
   * it they are all dropped (the partition then lists its repeated hashes for the caller's
   * check, as without keys), so a partition's memory stays bounded whatever the keys' size.
   */
  static Joined joined(Iterator<Chunk> it, long budget) {
    List<Chunk> chunks = new ArrayList<>();
    long n = 0;
    long size = 0;
    long read = 0;
    KeyBitmaps.Blocks bitmaps = null;
    long[] set = null;
    boolean keys = true;
    final long limit = Math.min(budget, Integer.MAX_VALUE - 8);
    while (it.hasNext()) {
      Chunk c = it.next();
      if (c.isTally()) {
        read += c.read;
        if (c.set != null) {
          if (set == null) {
            set = new long[c.set.length];
          }
          for (int i = 0; i < set.length; i++) {
            set[i] += c.set[i];
          }
        }
        continue;
      }
      if (c.isBitmaps()) {
        if (bitmaps == null) {
          bitmaps = new KeyBitmaps.Blocks();
        }
        for (int k = 0; k < c.hashes.length; k++) {
          long[] into = bitmaps.get(c.hashes[k]);
          if (into == null) {
            into = bitmaps.add(c.hashes[k]);
          }
          for (int i = 0; i < KeyBitmaps.WORDS; i++) {
            into[i] |= c.words[k * KeyBitmaps.WORDS + i];
          }
        }
        continue;
      }
      n += c.hashes.length;
      if (keys) {
        size += c.ends == null ? 0 : c.bytes.length;
        keys = c.ends != null && size <= limit;
        if (!keys) { // drop the bytes kept so far
          for (int i = 0; i < chunks.size(); i++) {
            chunks.set(i, new Chunk(chunks.get(i).hashes, null, null));
          }
        }
      }
      chunks.add(keys || c.ends == null ? c : new Chunk(c.hashes, null, null));
    }
    if (n > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException(n + " hashes in one partition: more partitions needed");
    }
    long[] hashes = new long[(int) n];
    int[] ends = keys && !chunks.isEmpty() ? new int[(int) n] : null;
    byte[] bytes = ends == null ? null : new byte[(int) size];
    int at = 0;
    int base = 0;
    for (int k = 0; k < chunks.size(); k++) {
      Chunk c = chunks.set(k, null); // released as it is copied: not held twice
      System.arraycopy(c.hashes, 0, hashes, at, c.hashes.length);
      if (ends != null) {
        for (int i = 0; i < c.hashes.length; i++) {
          ends[at + i] = base + c.ends[i];
        }
        System.arraycopy(c.bytes, 0, bytes, base, c.bytes.length);
        base += c.bytes.length;
      }
      at += c.hashes.length;
    }
    return new Joined(hashes, ends, bytes, read, bitmaps, set);
  }
}
