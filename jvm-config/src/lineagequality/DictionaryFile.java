package lineagequality;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Dictionary;
import org.apache.parquet.column.EncodingStats;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.DictionaryPageReadStore;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;

/** Reads one file: its dictionaries (`distinct`) or its failing rows (`count`). */
final class DictionaryFile implements Serializable {
  /** One file's distinct values per column (null: that column is not served). */
  static final class Values implements Serializable {
    private static final long serialVersionUID = 1L;
    final byte[][][] values;

    Values(byte[][][] values) {
      this.values = values;
    }
  }

  /** What `count` tests: each served column's values and which of them fail each metric. */
  static final class Tests implements Serializable {
    private static final long serialVersionUID = 1L;
    final List<byte[][]> values;
    final int[] columnOf;
    final List<boolean[]> fails;
    private transient List<Map<ByteBuffer, Integer>> index;

    Tests(List<byte[][]> values, int[] columnOf, List<boolean[]> fails) {
      this.values = new ArrayList<>(values);
      this.columnOf = columnOf;
      this.fails = new ArrayList<>(fails);
    }

    synchronized Map<ByteBuffer, Integer> indexOf(int column) {
      if (index == null) {
        final List<Map<ByteBuffer, Integer>> built = new ArrayList<>();
        for (byte[][] found : values) {
          final Map<ByteBuffer, Integer> one = new HashMap<>();
          for (int i = 0; i < found.length; i++) {
            one.put(ByteBuffer.wrap(found[i]), i);
          }
          built.add(Collections.unmodifiableMap(one));
        }
        index = built;
      }
      return index.get(column);
    }
  }

  private static final long serialVersionUID = 1L;
  private final ParquetFiles.Names names;
  private final int maxFooterBytes;
  private final int maxValues;
  private final Tests tests; // null in `distinct`

  DictionaryFile(ParquetFiles.Names names, int maxFooterBytes, int maxValues, Tests tests) {
    this.names = names;
    this.maxFooterBytes = maxFooterBytes;
    this.maxValues = maxValues;
    this.tests = tests;
  }

  Object file(Configuration conf, FileStatus file, boolean dictionaries) throws IOException {
    try (ParquetFileReader reader = ParquetFiles.open(conf, file, maxFooterBytes);
        SeekableInputStream headers = HadoopInputFile.fromStatus(file, conf).newStream()) {
      if (reader == null) {
        return null;
      }
      final ParquetMetadata footer = reader.getFooter();
      final Type[] fields = names.fields(footer.getFileMetaData().getSchema());
      if (fields == null) {
        return null;
      }
      return dictionaries
          ? values(reader, headers, footer, fields)
          : counts(reader, headers, footer, fields);
    }
  }

  /** One file's answer in a Spark task: an unreadable file is not answered (the scan says
   * what is wrong with it), rather than a task failing and retried. */
  Object fileInTask(Configuration conf, FileStatus file, boolean dictionaries) {
    try {
      return file(conf, file, dictionaries);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Whether the dictionary page at the chunk's start claims sizes within the chunk's (the
   * reader allocates what the page header says before reading it) and, when `values` is set,
   * few enough values for its `values` non-null rows (DictionaryValues.ROWS_PER_VALUE).
   */
  private static boolean dictionaryFits(
      SeekableInputStream in, ColumnChunkMetaData chunk, long values) throws IOException {
    in.seek(chunk.getStartingPos());
    final PageHeader header = Util.readPageHeader(in);
    return header.isSetDictionary_page_header()
        && header.getCompressed_page_size() >= 0
        && header.getCompressed_page_size() <= chunk.getTotalSize()
        && header.getUncompressed_page_size() >= 0
        && header.getUncompressed_page_size() <= DictionaryValues.MAX_CHUNK_BYTES
        && (values < 0 || repeats(header.getDictionary_page_header().getNum_values(), values));
  }

  /** Whether a dictionary of `size` values for `values` non-null rows pays for its tests. */
  private static boolean repeats(long size, long values) {
    return size <= DictionaryValues.FEW_VALUES
        || size * DictionaryValues.ROWS_PER_VALUE <= values;
  }

  /** The chunk's null count, or -1 when the chunk cannot be answered on its dictionary. */
  private static long usable(ColumnChunkMetaData chunk, long rows) {
    if (chunk == null
        || chunk.getValueCount() != rows
        || chunk.getPrimitiveType().getPrimitiveTypeName() != PrimitiveTypeName.BINARY
        || chunk.getTotalSize() > DictionaryValues.MAX_CHUNK_BYTES) {
      return -1;
    }
    final Statistics<?> stats = chunk.getStatistics();
    if (stats == null || !stats.isNumNullsSet()) {
      return -1;
    }
    final long nulls = stats.getNumNulls();
    if (nulls < 0 || nulls > rows) {
      return -1;
    }
    final EncodingStats encodings = chunk.getEncodingStats();
    if (nulls == rows) {
      return nulls; // no value to test, whatever the pages' encoding
    }
    if (encodings == null
        || encodings.hasNonDictionaryEncodedPages()
        || !encodings.hasDictionaryPages()) {
      return -1;
    }
    return nulls;
  }

  /** The chunk's dictionary, or null when it has none or more than `maxValues` values. */
  private static Dictionary dictionary(
      DictionaryPageReadStore pages, MessageType schema, String name, int maxValues)
      throws IOException {
    final ColumnDescriptor column = schema.getColumnDescription(new String[] {name});
    final DictionaryPage page = pages.readDictionaryPage(column);
    // the header's count, before the dictionary allocates a slot per value
    if (page == null || page.getDictionarySize() < 0 || page.getDictionarySize() > maxValues) {
      return null;
    }
    return page.getEncoding().initDictionary(column, page);
  }

  private Values values(
      ParquetFileReader reader, SeekableInputStream headers, ParquetMetadata footer,
      Type[] fields) throws IOException {
    final MessageType schema = footer.getFileMetaData().getSchema();
    final List<Map<ByteBuffer, Boolean>> found = new ArrayList<>();
    final boolean[] refused = new boolean[fields.length];
    for (int i = 0; i < fields.length; i++) {
      found.add(new LinkedHashMap<>());
    }
    for (BlockMetaData block : footer.getBlocks()) {
      final DictionaryPageReadStore pages = reader.getDictionaryReader(block);
      for (int i = 0; i < fields.length; i++) {
        if (refused[i] || fields[i] == null) {
          continue; // a column the file lacks is null on every row: no value to test
        }
        final String name = fields[i].getName();
        final ColumnChunkMetaData chunk = ParquetFiles.chunkOf(block, name);
        final long nulls = usable(chunk, block.getRowCount());
        if (nulls < 0) {
          refused[i] = true;
          continue;
        }
        if (nulls == block.getRowCount()) {
          continue;
        }
        if (!dictionaryFits(headers, chunk, block.getRowCount() - nulls)) {
          refused[i] = true;
          continue;
        }
        final Dictionary dictionary = dictionary(pages, schema, name, maxValues);
        if (dictionary == null) {
          refused[i] = true;
          continue;
        }
        for (int id = 0; id <= dictionary.getMaxId(); id++) {
          found.get(i).putIfAbsent(ByteBuffer.wrap(dictionary.decodeToBinary(id).getBytes()), Boolean.TRUE);
        }
        refused[i] = found.get(i).size() > maxValues;
      }
    }
    final byte[][][] values = new byte[fields.length][][];
    for (int i = 0; i < fields.length; i++) {
      if (!refused[i]) {
        values[i] = new byte[found.get(i).size()][];
        int k = 0;
        for (ByteBuffer value : found.get(i).keySet()) {
          values[i][k++] = value.array();
        }
      }
    }
    return new Values(values);
  }

  private long[] counts(
      ParquetFileReader reader, SeekableInputStream headers, ParquetMetadata footer,
      Type[] fields) throws IOException {
    final MessageType schema = footer.getFileMetaData().getSchema();
    final int metrics = tests.columnOf.length;
    final long[] out = new long[1 + metrics + fields.length];
    final List<BlockMetaData> blocks = footer.getBlocks();
    for (int b = 0; b < blocks.size(); b++) {
      final BlockMetaData block = blocks.get(b);
      final long rows = block.getRowCount();
      out[0] += rows;
      DictionaryPageReadStore pages = null;
      for (int i = 0; i < fields.length; i++) {
        if (fields[i] == null) {
          out[1 + metrics + i] += rows;
          continue;
        }
        final String name = fields[i].getName();
        final ColumnChunkMetaData chunk = ParquetFiles.chunkOf(block, name);
        final long nulls = usable(chunk, rows);
        if (nulls < 0) {
          return null;
        }
        out[1 + metrics + i] += nulls;
        if (nulls == rows) {
          continue;
        }
        if (!dictionaryFits(headers, chunk, -1)) { // `distinct` judged the values' share
          return null;
        }
        if (pages == null) {
          pages = reader.getDictionaryReader(block);
        }
        final Map<ByteBuffer, Integer> index = tests.indexOf(i);
        // more values than `distinct` saw in all files: the file changed in between
        final Dictionary dictionary = dictionary(pages, schema, name, index.size());
        if (dictionary == null) {
          return null;
        }
        // each id's value index; then whether any metric fails on an id of this chunk
        final int[] valueOf = new int[dictionary.getMaxId() + 1];
        boolean anyFails = false;
        for (int id = 0; id < valueOf.length; id++) {
          final Integer value = index.get(ByteBuffer.wrap(dictionary.decodeToBinary(id).getBytes()));
          if (value == null) {
            return null; // a value `distinct` did not see: the file changed in between
          }
          valueOf[id] = value;
          for (int m = 0; m < metrics; m++) {
            anyFails |= tests.columnOf[m] == i && tests.fails.get(m)[value];
          }
        }
        if (!anyFails) {
          continue;
        }
        final long[] perId = idCounts(reader, schema, b, name, valueOf.length);
        if (perId == null || sum(perId) != rows - nulls) {
          return null;
        }
        for (int m = 0; m < metrics; m++) {
          if (tests.columnOf[m] != i) {
            continue;
          }
          final boolean[] fail = tests.fails.get(m);
          for (int id = 0; id < perId.length; id++) {
            if (fail[valueOf[id]]) {
              out[1 + m] += perId[id];
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * How many non-null rows of the chunk hold each dictionary id; null if a page is not
   * dictionary-encoded after all.
   */
  private static long[] idCounts(
      ParquetFileReader reader, MessageType schema, int block, String name, int ids)
      throws IOException {
    final ColumnDescriptor column = schema.getColumnDescription(new String[] {name});
    reader.setRequestedSchema(new MessageType(schema.getName(), schema.getType(name)));
    final PageReadStore store = reader.readRowGroup(block);
    try {
      // the pages' runs, read directly: parquet-mr's ColumnReader costs ~35 ns a row
      return DictionaryIds.count(store.getPageReader(column), column, ids);
    } finally {
      if (store instanceof AutoCloseable) { // Parquet 1.16 (Spark 4): its buffers back
        try {
          ((AutoCloseable) store).close();
        } catch (Exception e) {
          // nothing held that matters: the heap allocator's buffers are collected
        }
      }
    }
  }

  private static long sum(long[] values) {
    long total = 0;
    for (long v : values) {
      total += v;
    }
    return total;
  }
}
