package lineagequality;

import java.io.Serializable;
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
  private static final InternalRow EMPTY = new GenericInternalRow(0);

  /** Up to CHUNK hashes bound for one partition; `ends` null when none carries a key. */
  static final class Chunk implements Serializable {
    private static final long serialVersionUID = 1L;
    final long[] hashes;
    final int[] ends; // row i's key is bytes[ends[i - 1], ends[i]) (empty for a key set unchecked)
    final byte[] bytes;

    Chunk(long[] hashes, int[] ends, byte[] bytes) {
      this.hashes = hashes;
      this.ends = ends;
      this.bytes = bytes;
    }
  }

  /** One buffer of a map task for one target partition. */
  private static final class Buffer {
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
          for (int v = size; ; v >>>= 7) {
            if ((v & ~0x7F) == 0) {
              bytes[at++] = (byte) v;
              break;
            }
            bytes[at++] = (byte) ((v & 0x7F) | 0x80);
          }
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
   * target partition, not its whole input. Columns 0 .. keyOf.length - 1 of a row are hashes
   * (each non-null one is shuffled); where keyOf[c] >= 0, columns keyOf[c] .. keyOf[c] +
   * keyFields[c] - 1 are that hash's key, whose bytes travel with it (`fixed`: which columns
   * are fixed-width in an UnsafeRow).
   */
  static Iterator<Tuple2<Integer, Chunk>> chunks(
      Iterator<InternalRow> it, int partitions, int[] keyOf, int[] keyFields, boolean[] fixed) {
    final boolean keys = Arrays.stream(keyOf).anyMatch(k -> k >= 0);
    return new Iterator<Tuple2<Integer, Chunk>>() {
      private final Buffer[] buffers = new Buffer[partitions];
      private int flushed = 0; // past the input: the partial buffers handed out so far
      private Tuple2<Integer, Chunk> next;
      private InternalRow row = EMPTY;
      private int column = keyOf.length; // the next hash column of `row` to read


      @Override
      public boolean hasNext() {
        while (next == null && (column < keyOf.length || it.hasNext())) {
          if (column == keyOf.length) {
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
          Buffer b = buffers[p];
          if (b == null) { // made on first use: a task with few rows holds few buffers
            b = buffers[p] = new Buffer(keys);
          }
          if (keyOf[c] < 0) {
            b.add(h);
          } else {
            b.add(h, (UnsafeRow) row, keyOf[c], keyFields[c], fixed);
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
        return next != null;
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

  /** A partition's hashes, and its keys' bytes (null when none came or past the budget). */
  static final class Joined {
    final long[] hashes;
    final int[] ends;
    final byte[] bytes;

    Joined(long[] hashes, int[] ends, byte[] bytes) {
      this.hashes = hashes;
      this.ends = ends;
      this.bytes = bytes;
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
    boolean keys = true;
    final long limit = Math.min(budget, Integer.MAX_VALUE - 8);
    while (it.hasNext()) {
      Chunk c = it.next();
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
    return new Joined(hashes, ends, bytes);
  }
}
