package lineagequality;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.PageReader;

/**
 * How many rows of a dictionary-encoded Parquet column chunk hold each dictionary id (see
 * DictionaryValues), read off the pages' RLE / bit-packed hybrid runs: an RLE run adds its
 * length to its id at once, a bit-packed run is unpacked without building a value. Only a flat
 * column (no repetition, at most one definition level): a null is a definition level of 0 and
 * has no id in the values. Anything else (a page not dictionary-encoded, levels in the
 * deprecated BIT_PACKED encoding, a run past its page): null, and the caller leaves the column
 * to the scan.
 */
final class DictionaryIds {
  private DictionaryIds() {}

  /** The rows holding each of `ids` dictionary ids, or null where the pages cannot say. */
  static long[] count(PageReader pages, ColumnDescriptor column, int ids) throws IOException {
    if (column.getMaxRepetitionLevel() != 0 || column.getMaxDefinitionLevel() > 1) {
      return null;
    }
    final boolean optional = column.getMaxDefinitionLevel() == 1;
    final long[] perId = new long[ids];
    for (DataPage page = pages.readPage(); page != null; page = pages.readPage()) {
      final boolean ok;
      if (page instanceof DataPageV1) {
        ok = v1((DataPageV1) page, optional, perId);
      } else if (page instanceof DataPageV2) {
        ok = v2((DataPageV2) page, perId);
      } else {
        ok = false;
      }
      if (!ok) {
        return null;
      }
    }
    return perId;
  }

  private static boolean dictionary(Encoding encoding) {
    return encoding == Encoding.RLE_DICTIONARY || encoding == Encoding.PLAIN_DICTIONARY;
  }

  private static boolean v1(DataPageV1 page, boolean optional, long[] perId) throws IOException {
    if (!dictionary(page.getValueEncoding())) {
      return false;
    }
    final ByteBuffer in = page.getBytes().toByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    long values = page.getValueCount();
    if (optional) { // [length][hybrid levels of bit width 1]: the ones are the values present
      if (page.getDlEncoding() != Encoding.RLE || in.remaining() < 4) {
        return false;
      }
      final int length = in.getInt();
      if (length < 0 || length > in.remaining()) {
        return false;
      }
      final ByteBuffer levels = in.slice();
      levels.limit(length);
      final long[] perLevel = new long[2];
      if (!hybrid(levels, 1, values, perLevel)) {
        return false;
      }
      values = perLevel[1];
      in.position(in.position() + length);
    }
    return ids(in, values, perId);
  }

  private static boolean v2(DataPageV2 page, long[] perId) throws IOException {
    if (!dictionary(page.getDataEncoding()) || page.getRepetitionLevels().size() != 0) {
      return false;
    }
    final long values = (long) page.getValueCount() - page.getNullCount();
    final ByteBuffer in = page.getData().toByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    return values >= 0 && ids(in, values, perId);
  }

  /** The values part of a dictionary-encoded page: one byte of bit width, then the runs. */
  private static boolean ids(ByteBuffer in, long values, long[] perId) {
    if (values == 0) {
      return true;
    }
    if (!in.hasRemaining()) {
      return false;
    }
    final int bitWidth = in.get() & 0xFF;
    return bitWidth <= 32 && hybrid(in, bitWidth, values, perId);
  }

  /**
   * Adds the first `count` values of the RLE / bit-packed hybrid runs in `in` to `perValue`;
   * false when the runs end early or hold a value past `perValue`.
   */
  static boolean hybrid(ByteBuffer in, int bitWidth, long count, long[] perValue) {
    final int valueBytes = (bitWidth + 7) / 8;
    final long mask = bitWidth == 32 ? 0xFFFFFFFFL : (1L << bitWidth) - 1;
    long left = count;
    while (left > 0) {
      final long header = varInt(in);
      if (header < 0) {
        return false;
      }
      if ((header & 1) == 0) { // an RLE run: one value, repeated
        final long run = header >>> 1;
        if (in.remaining() < valueBytes) {
          return false;
        }
        long value = 0;
        for (int b = 0; b < valueBytes; b++) {
          value |= (long) (in.get() & 0xFF) << (8 * b);
        }
        if (value >= perValue.length) {
          return false;
        }
        final long n = Math.min(run, left);
        perValue[(int) value] += n;
        left -= n;
      } else { // groups of 8 values, bit-packed from the low bits up; the last may be padding
        final long groups = header >>> 1;
        final long bytes = groups * bitWidth;
        if (bytes > in.remaining()) {
          return false;
        }
        final long n = Math.min(groups * 8, left);
        final int end = in.position() + (int) bytes;
        long buffer = 0;
        int held = 0;
        for (long k = 0; k < n; k++) {
          while (held < bitWidth) {
            buffer |= (long) (in.get() & 0xFF) << held;
            held += 8;
          }
          final long value = buffer & mask;
          buffer >>>= bitWidth;
          held -= bitWidth;
          if (value >= perValue.length) {
            return false;
          }
          perValue[(int) value]++;
        }
        in.position(end);
        left -= n;
      }
    }
    return true;
  }

  /** An unsigned LEB128 int, or -1 when it runs past the buffer or past 35 bits. */
  private static long varInt(ByteBuffer in) {
    long value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (!in.hasRemaining()) {
        return -1;
      }
      final int b = in.get() & 0xFF;
      value |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    return -1;
  }
}
