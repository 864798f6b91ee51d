package lineagequality;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Null counts of Parquet columns from the files' footers (see lineage_quality.engine.footer_nulls):
 * for a column that no rule reads but to count its nulls, the scan need not read its pages. Each
 * column chunk's statistics hold its null count, which Spark itself trusts (IsNull filters skip
 * row groups on it). Only where the answer is certainly the scan's: a DataFrame that is exactly a
 * scan of plain Parquet files (no Delta or Iceberg, whose deletes the footers do not show), no
 * corrupt or missing files skipped, top-level primitive columns matched by name as Spark's reader
 * matches them, and every chunk with its null count written. Anything else: null, and the caller
 * counts in the scan.
 *
 * <p>`stats` also gives the smallest and largest value of signed integer columns (see
 * lineage_quality.engine.footer_bounds), from the same footers in the same pass.
 */
public final class FooterNulls {
  private FooterNulls() {}

  /** Files read on the driver; more are read by a Spark job, a slice of files per task. */
  static final int DRIVER_FILES = 32;

  /**
   * {rows, nulls of columns[0], nulls of columns[1], ...} of the files `df` scans, or null when
   * the footers cannot answer for the scan. `maxFiles` bounds the footers read (0: no bound);
   * a file whose footer says it is longer than `maxFooterBytes` is left to the scan (a crafted
   * length would have the reader allocate it on the driver).
   */
  public static long[] count(
      Dataset<Row> df, List<String> columns, int maxFiles, int maxFooterBytes) throws IOException {
    final long[] read = read(df, columns, new boolean[columns.size()], maxFiles, maxFooterBytes);
    return read == null ? null : nulls(read);
  }

  /**
   * What the footers say of `columns`, or null when they cannot answer for the scan (as `count`).
   * `bounded` holds a '1' for each column whose bounds are wanted, '0' for the others; bounds are
   * given only when the files hold `minFileBytes` or more (below it the scan is as cheap).
   */
  public static Stats stats(
      Dataset<Row> df,
      List<String> columns,
      String bounded,
      int maxFiles,
      int maxFooterBytes,
      long minFileBytes)
      throws IOException {
    if (bounded.length() != columns.size()) {
      throw new IllegalArgumentException("one bounds flag per column");
    }
    final ParquetFiles scanned = ParquetFiles.of(df, columns, maxFiles);
    if (scanned == null) {
      return null;
    }
    final boolean[] wanted = new boolean[columns.size()];
    final boolean large = scanned.bytes() >= minFileBytes;
    for (int i = 0; i < wanted.length; i++) {
      wanted[i] = large && bounded.charAt(i) == '1';
    }
    final long[] read = read(df, scanned, columns, wanted, maxFooterBytes);
    if (read == null) {
      return null;
    }
    final List<StructField> fields = new ArrayList<>();
    final List<long[]> ends = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      if (read[1 + 4 * i + 1] == HAS_VALUES) {
        final DataType type = scanned.data.apply(columns.get(i)).dataType();
        fields.add(DataTypes.createStructField(columns.get(i), type, true));
        ends.add(new long[] {read[1 + 4 * i + 2], read[1 + 4 * i + 3]});
      }
    }
    final List<Row> rows = new ArrayList<>();
    for (int end = 0; end < 2 && !fields.isEmpty(); end++) {
      final Object[] row = new Object[fields.size()];
      for (int j = 0; j < row.length; j++) {
        final long value = ends.get(j)[end];
        row[j] =
            fields.get(j).dataType().equals(DataTypes.IntegerType)
                ? (Object) Integer.valueOf((int) value)
                : (Object) Long.valueOf(value);
      }
      rows.add(RowFactory.create(row));
    }
    final Dataset<Row> frame =
        fields.isEmpty()
            ? null
            : df.sparkSession().createDataFrame(rows, DataTypes.createStructType(fields));
    return new Stats(read, frame);
  }

  /** Bounds states: no value in any chunk (every row null), bounds given, or no bounds. */
  static final long NO_VALUES = 0;
  static final long HAS_VALUES = 1;
  static final long UNBOUNDED = -1;

  /** What `stats` found: the footers' figures and the bounds as a local relation. */
  public static final class Stats {
    private final long[] values;
    private final Dataset<Row> frame;

    Stats(long[] values, Dataset<Row> frame) {
      this.values = values;
      this.frame = frame;
    }

    /**
     * "rows,nulls,state,min,max,nulls,state,..." (state 1: min and max given; 0: the column holds
     * no value; -1: no bounds). One string, one round trip from Python.
     */
    public String values() {
      final StringBuilder out = new StringBuilder();
      for (int i = 0; i < values.length; i++) {
        out.append(i == 0 ? "" : ",").append(values[i]);
      }
      return out.toString();
    }

    /**
     * Two rows, the smallest values then the largest, of the columns with state 1 (in their
     * order), typed as the scan reads them; null when there is none. A local relation: queries
     * on it run on the driver, with no job.
     */
    public Dataset<Row> frame() {
      return frame;
    }
  }

  private static long[] nulls(long[] read) {
    final int n = (read.length - 1) / 4;
    final long[] out = new long[1 + n];
    out[0] = read[0];
    for (int i = 0; i < n; i++) {
      out[1 + i] = read[1 + 4 * i];
    }
    return out;
  }

  private static long[] read(
      Dataset<Row> df, List<String> columns, boolean[] bounded, int maxFiles, int maxFooterBytes)
      throws IOException {
    final ParquetFiles scanned = ParquetFiles.of(df, columns, maxFiles);
    return scanned == null ? null : read(df, scanned, columns, bounded, maxFooterBytes);
  }

  /** {rows, then per column: nulls, bounds state, min, max}, or null (see `count`). */
  private static long[] read(
      Dataset<Row> df,
      ParquetFiles scanned,
      List<String> columns,
      boolean[] bounded,
      int maxFooterBytes)
      throws IOException {
    final FileStatus[] files = scanned.files;
    final Configuration hadoop = scanned.hadoop;
    final boolean[] wide = new boolean[columns.size()];
    for (int i = 0; i < wide.length; i++) {
      final DataType type = scanned.data.apply(columns.get(i)).dataType();
      bounded[i] &= type.equals(DataTypes.IntegerType) || type.equals(DataTypes.LongType);
      wide[i] = type.equals(DataTypes.LongType);
    }
    // Spark 4's Parquet reader widens an INT32 chunk to a long column; Spark 3.5's vectorized
    // reader refuses to, and that error is the scan's to report
    final boolean widens = !df.sparkSession().version().startsWith("3.");
    final Reader reader =
        new Reader(columns, scanned.caseSensitive, maxFooterBytes, bounded, wide, widens);
    final List<long[]> parts = new ArrayList<>();
    if (files.length <= DRIVER_FILES) {
      for (FileStatus file : files) {
        parts.add(reader.file(hadoop, file));
      }
    } else {
      final SerializableConfiguration shipped = new SerializableConfiguration(hadoop);
      final JavaSparkContext sc =
          JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
      final int slices = Math.min(files.length, 4 * sc.defaultParallelism());
      parts.addAll(
          sc.parallelize(Arrays.asList(files), slices)
              .map(file -> reader.file(shipped.value(), file))
              .collect());
    }
    long[] total = null;
    for (long[] part : parts) {
      if (part == null) {
        return null;
      }
      total = total == null ? part.clone() : Reader.merge(total, part);
    }
    return total == null ? Reader.empty(columns.size(), bounded) : total;
  }

  /** {rows, nulls of columns[0], ...} of one file's footer, or null when it cannot answer. */
  public static long[] summarize(
      ParquetMetadata footer, List<String> columns, boolean caseSensitive) {
    final boolean[] none = new boolean[columns.size()];
    final long[] read =
        new Reader(columns, caseSensitive, Integer.MAX_VALUE, none, none, false).summarize(footer);
    return read == null ? null : nulls(read);
  }

  /**
   * {rows, then per column: nulls, bounds state, min, max} of one file's footer, or null when it
   * cannot answer; `bounded` and `wide` ("0"/"1" per column): bounds wanted, Spark reads a long;
   * `widens`: the reader reads an INT32 chunk into a long column (Spark 4).
   */
  public static long[] summarizeBounds(
      ParquetMetadata footer,
      List<String> columns,
      boolean caseSensitive,
      String bounded,
      String wide,
      boolean widens) {
    final boolean[] b = new boolean[columns.size()];
    final boolean[] w = new boolean[columns.size()];
    for (int i = 0; i < b.length; i++) {
      b[i] = bounded.charAt(i) == '1';
      w[i] = wide.charAt(i) == '1';
    }
    return new Reader(columns, caseSensitive, Integer.MAX_VALUE, b, w, widens).summarize(footer);
  }

  /** One file's {rows, then per column: nulls, bounds state, min, max}, or null. */
  static final class Reader implements Serializable {
    private static final long serialVersionUID = 1L;
    private final ParquetFiles.Names names;
    private final int maxFooterBytes;
    private final boolean[] bounded;
    private final boolean[] wide;
    private final boolean widens;

    Reader(
        List<String> columns,
        boolean caseSensitive,
        int maxFooterBytes,
        boolean[] bounded,
        boolean[] wide,
        boolean widens) {
      this.names = new ParquetFiles.Names(columns, caseSensitive);
      this.maxFooterBytes = maxFooterBytes;
      this.bounded = bounded.clone();
      this.wide = wide.clone();
      this.widens = widens;
    }

    long[] file(Configuration conf, FileStatus file) throws IOException {
      final ParquetMetadata footer;
      try (ParquetFileReader reader = ParquetFiles.open(conf, file, maxFooterBytes)) {
        if (reader == null) {
          return null;
        }
        footer = reader.getFooter();
      }
      return summarize(footer);
    }

    static long[] empty(int columns, boolean[] bounded) {
      final long[] out = new long[1 + 4 * columns];
      for (int i = 0; i < columns; i++) {
        out[1 + 4 * i + 1] = bounded[i] ? NO_VALUES : UNBOUNDED;
      }
      return out;
    }

    /** Two files' figures as one: `into`, updated. */
    static long[] merge(long[] into, long[] part) {
      into[0] += part[0];
      for (int at = 1; at < into.length; at += 4) {
        into[at] += part[at];
        final long a = into[at + 1];
        final long b = part[at + 1];
        if (a == UNBOUNDED || b == UNBOUNDED) {
          into[at + 1] = UNBOUNDED;
        } else if (a == NO_VALUES) {
          System.arraycopy(part, at + 1, into, at + 1, 3);
        } else if (b == HAS_VALUES) {
          into[at + 2] = Math.min(into[at + 2], part[at + 2]);
          into[at + 3] = Math.max(into[at + 3], part[at + 3]);
        }
      }
      return into;
    }

    long[] summarize(ParquetMetadata footer) {
      final Type[] fields = names.fields(footer.getFileMetaData().getSchema());
      if (fields == null) {
        return null;
      }
      final long[] out = empty(fields.length, bounded);
      for (int i = 0; i < fields.length; i++) {
        if (fields[i] != null && out[1 + 4 * i + 1] == NO_VALUES && !boundable(i, fields[i])) {
          out[1 + 4 * i + 1] = UNBOUNDED;
        }
      }
      final long[] chunkOut = new long[out.length];
      for (BlockMetaData block : footer.getBlocks()) {
        final long rows = block.getRowCount();
        chunkOut[0] = rows;
        for (int i = 0; i < fields.length; i++) {
          final int at = 1 + 4 * i;
          chunkOut[at + 1] = out[at + 1] == UNBOUNDED ? UNBOUNDED : NO_VALUES;
          if (fields[i] == null) { // a column this file lacks reads as null on every row
            chunkOut[at] = rows;
            continue;
          }
          final ColumnChunkMetaData chunk = ParquetFiles.chunkOf(block, fields[i].getName());
          if (chunk == null || chunk.getValueCount() != rows) {
            return null;
          }
          final Statistics<?> stats = chunk.getStatistics();
          if (stats == null || !stats.isNumNullsSet()) {
            return null;
          }
          final long nulls = stats.getNumNulls();
          if (nulls < 0 || nulls > rows) {
            return null;
          }
          chunkOut[at] = nulls;
          if (chunkOut[at + 1] == NO_VALUES && nulls < rows) {
            if (stats.hasNonNullValue()
                && stats.genericGetMin() instanceof Number
                && stats.genericGetMax() instanceof Number) {
              chunkOut[at + 1] = HAS_VALUES;
              chunkOut[at + 2] = ((Number) stats.genericGetMin()).longValue();
              chunkOut[at + 3] = ((Number) stats.genericGetMax()).longValue();
              if (chunkOut[at + 2] > chunkOut[at + 3]) {
                chunkOut[at + 1] = UNBOUNDED; // a footer that contradicts itself
              }
            } else {
              chunkOut[at + 1] = UNBOUNDED; // values without written bounds
            }
          }
        }
        merge(out, chunkOut);
      }
      return out;
    }

    /**
     * Whether the chunk statistics of `field` bound the values Spark reads: signed 32- or 64-bit
     * integers in their plain order (an unsigned, decimal, date or time annotation orders or
     * reads them otherwise), a 64-bit one only where Spark reads a long, a 32-bit one into a long
     * only where the reader widens it.
     */
    private boolean boundable(int i, Type field) {
      if (field.isRepetition(Type.Repetition.REPEATED)) {
        return false;
      }
      final PrimitiveTypeName physical = field.asPrimitiveType().getPrimitiveTypeName();
      final boolean int32 = physical == PrimitiveTypeName.INT32 && (!wide[i] || widens);
      if (!int32 && !(physical == PrimitiveTypeName.INT64 && wide[i])) {
        return false;
      }
      final LogicalTypeAnnotation logical = field.getLogicalTypeAnnotation();
      return logical == null
          || (logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation
              && ((LogicalTypeAnnotation.IntLogicalTypeAnnotation) logical).isSigned());
    }
  }
}
