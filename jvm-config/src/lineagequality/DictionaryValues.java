package lineagequality;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Dictionary;
import org.apache.parquet.column.EncodingStats;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.DictionaryPageReadStore;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Value tests of dictionary-encoded Parquet string columns, answered on their dictionaries (see
 * lineage_quality.engine.dictionary_values): a column of country or status codes holds a handful
 * of distinct values whatever its row count, and every row of a dictionary-encoded chunk is an id
 * into its chunk's dictionary.
 *
 * <p>Two passes. `distinct` reads each chunk's dictionary page only and returns the union of the
 * values as a local DataFrame, on which the caller evaluates each rule's own Spark expression
 * (so the answer is Spark's, for every value, by construction). `count` then adds up, per rule,
 * the rows whose value failed: a chunk whose dictionary holds no failing value costs its
 * dictionary page; any other has its ids decoded (integers, no string is built). The scan reads
 * neither column. Only where the answer is certainly the scan's (ParquetFiles), each chunk
 * wholly dictionary-encoded, values valid UTF-8 and the union within bounds; anything else:
 * null (for a column: not served), and the scan tests the values.
 */
public final class DictionaryValues {
  private DictionaryValues() {}

  /** Files read on the driver (by a few threads); more are read by a Spark job. */
  static final int DRIVER_FILES = 32;

  /** Threads reading files on the driver. */
  static final int DRIVER_THREADS = 4;

  /** A chunk larger than this (compressed) is left to the scan: its pages are read whole. */
  static final long MAX_CHUNK_BYTES = 64L * 1024 * 1024;

  /** What `distinct` found: the served columns, their values and the frame holding them. */
  public static final class Found {
    private final ParquetFiles scanned;
    private final List<String> columns; // served, in the caller's order
    private final int[] served; // their indices in the requested columns
    private final List<byte[][]> values; // per served column: its distinct values
    private final Dataset<Row> frame;
    private final int maxFooterBytes;

    Found(
        ParquetFiles scanned,
        List<String> columns,
        int[] served,
        List<byte[][]> values,
        Dataset<Row> frame,
        int maxFooterBytes) {
      this.scanned = scanned;
      this.columns = columns;
      this.served = served;
      this.values = values;
      this.frame = frame;
      this.maxFooterBytes = maxFooterBytes;
    }

    /**
     * The served columns, each wholly dictionary-encoded in every file, as one line: for each,
     * its index in the requested columns and its number of distinct values (its rows in
     * `frame`), "index:size" separated by commas. One string, one round trip from Python.
     */
    public String layout() {
      final StringBuilder out = new StringBuilder();
      for (int j = 0; j < served.length; j++) {
        out.append(j == 0 ? "" : ",").append(served[j]).append(':').append(values.get(j).length);
      }
      return out.toString();
    }

    /**
     * One row per distinct value: served column j's values in its own column (of the
     * dataset's type and name), null in the others; column 0's first, then column 1's.
     */
    public Dataset<Row> frame() {
      return frame;
    }
  }

  /**
   * The distinct values of those `columns` that are dictionary-encoded in every chunk, or null
   * when the files cannot stand for `df`'s scan. A column with more than `maxValues` distinct
   * values or `maxBytes` of them is not served.
   */
  public static Found distinct(
      Dataset<Row> df,
      List<String> columns,
      int maxFiles,
      int maxFooterBytes,
      int maxValues,
      long maxBytes)
      throws Exception {
    final ParquetFiles scanned = ParquetFiles.of(df, columns, maxFiles);
    if (scanned == null) {
      return null;
    }
    for (String column : columns) {
      if (!DataTypes.StringType.equals(scanned.data.apply(column).dataType())) {
        return null; // a collated string (Spark 4) compares by its collation, not by bytes
      }
    }
    final Reader reader =
        new Reader(
            new ParquetFiles.Names(columns, scanned.caseSensitive),
            maxFooterBytes,
            maxValues,
            null);
    final List<Object> parts = perFile(df, scanned, reader, true);
    final int n = columns.size();
    final List<Map<ByteBuffer, Boolean>> union = new ArrayList<>();
    final long[] bytes = new long[n];
    final boolean[] refused = new boolean[n];
    for (int i = 0; i < n; i++) {
      union.add(new LinkedHashMap<>());
    }
    for (Object part : parts) {
      if (part == null) {
        return null;
      }
      final FileValues file = (FileValues) part;
      for (int i = 0; i < n; i++) {
        if (refused[i] || file.values[i] == null) {
          refused[i] = refused[i] || file.values[i] == null;
          continue;
        }
        for (byte[] value : file.values[i]) {
          if (union.get(i).putIfAbsent(ByteBuffer.wrap(value), Boolean.TRUE) == null) {
            bytes[i] += value.length;
          }
        }
        refused[i] = union.get(i).size() > maxValues || bytes[i] > maxBytes;
      }
    }
    final List<String> served = new ArrayList<>();
    final List<Integer> indices = new ArrayList<>();
    final List<byte[][]> values = new ArrayList<>();
    final List<StructField> fields = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      final byte[][] found = new byte[union.get(i).size()][];
      int k = 0;
      for (ByteBuffer value : union.get(i).keySet()) {
        found[k++] = value.array();
      }
      if (refused[i] || !allUtf8(found)) { // a Java String cannot carry other bytes exactly
        continue;
      }
      served.add(columns.get(i));
      indices.add(i);
      values.add(found);
      fields.add(DataTypes.createStructField(columns.get(i), DataTypes.StringType, true));
    }
    final List<Row> rowsOfFrame = new ArrayList<>();
    for (int j = 0; j < values.size(); j++) {
      for (byte[] value : values.get(j)) {
        final Object[] row = new Object[values.size()];
        row[j] = new String(value, StandardCharsets.UTF_8);
        rowsOfFrame.add(RowFactory.create(row));
      }
    }
    final Dataset<Row> frame =
        df.sparkSession().createDataFrame(rowsOfFrame, DataTypes.createStructType(fields));
    final int[] positions = indices.stream().mapToInt(Integer::intValue).toArray();
    return new Found(scanned, served, positions, values, frame, maxFooterBytes);
  }

  /**
   * "rows,failing rows of each metric...,nulls of each served column..." of the files `found` read,
   * or null when they no longer answer as they did (a file replaced since: a value or an
   * encoding `distinct` did not see). `tests` holds one item per metric, separated by "/":
   * "column:value,value,..." where column is the metric's served column (its position in
   * `layout`) and the values are the indices of that column's values that fail the metric.
   */
  public static String count(Dataset<Row> df, Found found, String tests) throws Exception {
    final String[] items = tests.isEmpty() ? new String[0] : tests.split("/", -1);
    final int metrics = items.length;
    final int[] columnOf = new int[metrics];
    final List<boolean[]> fails = new ArrayList<>();
    for (int m = 0; m < metrics; m++) {
      final String[] parts = items[m].split(":", -1);
      columnOf[m] = Integer.parseInt(parts[0]);
      final boolean[] f = new boolean[found.values.get(columnOf[m]).length];
      if (!parts[1].isEmpty()) {
        for (String index : parts[1].split(",", -1)) {
          f[Integer.parseInt(index)] = true;
        }
      }
      fails.add(f);
    }
    final Reader reader =
        new Reader(
            new ParquetFiles.Names(found.columns, found.scanned.caseSensitive),
            found.maxFooterBytes,
            Integer.MAX_VALUE,
            new Tests(found.values, columnOf, fails));
    final List<Object> parts = perFile(df, found.scanned, reader, false);
    final long[] total = new long[1 + metrics + found.columns.size()];
    for (Object part : parts) {
      if (part == null) {
        return null;
      }
      final long[] counted = (long[]) part;
      for (int i = 0; i < total.length; i++) {
        total[i] += counted[i];
      }
    }
    final StringBuilder out = new StringBuilder(); // one round trip to Python
    for (int i = 0; i < total.length; i++) {
      out.append(i == 0 ? "" : ",").append(total[i]);
    }
    return out.toString();
  }

  private static boolean allUtf8(byte[][] values) {
    for (byte[] value : values) {
      try {
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(value));
      } catch (CharacterCodingException e) {
        return false;
      }
    }
    return true;
  }

  /** Each file's answer (null where it has none), read by a few threads or a Spark job. */
  private static List<Object> perFile(
      Dataset<Row> df, ParquetFiles scanned, Reader reader, boolean dictionaries)
      throws Exception {
    final FileStatus[] files = scanned.files;
    if (files.length > DRIVER_FILES) {
      final SerializableConfiguration shipped = new SerializableConfiguration(scanned.hadoop);
      final JavaSparkContext sc =
          JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
      final int slices = Math.min(files.length, 4 * sc.defaultParallelism());
      return sc.parallelize(Arrays.asList(files), slices)
          .map(file -> reader.file(shipped.value(), file, dictionaries))
          .collect();
    }
    // a few threads: each holds a chunk's pages, on the driver
    final int cores = Runtime.getRuntime().availableProcessors();
    final int threads = Math.max(1, Math.min(files.length, Math.min(cores, DRIVER_THREADS)));
    final ClassLoader loader = Thread.currentThread().getContextClassLoader();
    final ExecutorService pool =
        Executors.newFixedThreadPool(
            threads,
            task -> {
              final Thread thread = new Thread(task, "lineage-quality-dictionaries");
              thread.setDaemon(true);
              thread.setContextClassLoader(loader); // a file system from the application's jars
              return thread;
            });
    try {
      final List<Future<Object>> pending = new ArrayList<>();
      for (FileStatus file : files) {
        pending.add(pool.submit(() -> reader.file(scanned.hadoop, file, dictionaries)));
      }
      final List<Object> out = new ArrayList<>();
      for (Future<Object> one : pending) {
        try {
          out.add(one.get());
        } catch (ExecutionException e) {
          throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  /** One file's distinct values per column (null: that column is not served). */
  static final class FileValues implements Serializable {
    private static final long serialVersionUID = 1L;
    final byte[][][] values;

    FileValues(byte[][][] values) {
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

  /** Reads one file: its dictionaries (`distinct`) or its failing rows (`count`). */
  static final class Reader implements Serializable {
    private static final long serialVersionUID = 1L;
    private final ParquetFiles.Names names;
    private final int maxFooterBytes;
    private final int maxValues;
    private final Tests tests; // null in `distinct`

    Reader(ParquetFiles.Names names, int maxFooterBytes, int maxValues, Tests tests) {
      this.names = names;
      this.maxFooterBytes = maxFooterBytes;
      this.maxValues = maxValues;
      this.tests = tests;
    }

    Object file(Configuration conf, FileStatus file, boolean dictionaries) throws IOException {
      try (ParquetFileReader reader = ParquetFiles.open(conf, file, maxFooterBytes)) {
        if (reader == null) {
          return null;
        }
        final ParquetMetadata footer = reader.getFooter();
        final Type[] fields = names.fields(footer.getFileMetaData().getSchema());
        if (fields == null) {
          return null;
        }
        return dictionaries ? values(reader, footer, fields) : counts(reader, footer, fields);
      }
    }

    /** The chunk's null count, or -1 when the chunk cannot be answered on its dictionary. */
    private static long usable(ColumnChunkMetaData chunk, long rows) {
      if (chunk == null
          || chunk.getValueCount() != rows
          || chunk.getPrimitiveType().getPrimitiveTypeName() != PrimitiveTypeName.BINARY
          || chunk.getTotalSize() > MAX_CHUNK_BYTES) {
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

    private FileValues values(ParquetFileReader reader, ParquetMetadata footer, Type[] fields)
        throws IOException {
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
      return new FileValues(values);
    }

    private long[] counts(ParquetFileReader reader, ParquetMetadata footer, Type[] fields)
        throws IOException {
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
          final long nulls = usable(ParquetFiles.chunkOf(block, name), rows);
          if (nulls < 0) {
            return null;
          }
          out[1 + metrics + i] += nulls;
          if (nulls == rows) {
            continue;
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
      // the pages' runs, read directly: parquet-mr's ColumnReader costs ~35 ns a row
      return DictionaryIds.count(store.getPageReader(column), column, ids);
    }

    private static long sum(long[] values) {
      long total = 0;
      for (long v : values) {
        total += v;
      }
      return total;
    }
  }
}
