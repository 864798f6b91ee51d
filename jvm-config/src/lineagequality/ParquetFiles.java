package lineagequality;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

import scala.collection.JavaConverters;

/**
 * The Parquet files a DataFrame reads, when it is exactly a read of plain Parquet files whose
 * footers and pages can stand for the scan (FooterNulls, DictionaryValues): no Delta or Iceberg,
 * whose deletes the files do not show, no corrupt or missing files skipped, the given columns
 * top-level data columns matched by name as Spark's reader matches them.
 */
final class ParquetFiles {
  final FileStatus[] files; // as the index lists them: the lengths the scan reads
  final Configuration hadoop;
  final boolean caseSensitive;
  final StructType data;

  private ParquetFiles(
      FileStatus[] files, Configuration hadoop, boolean caseSensitive, StructType data) {
    this.files = files;
    this.hadoop = hadoop;
    this.caseSensitive = caseSensitive;
    this.data = data;
  }

  /** The files `df` reads, or null when they cannot stand for its scan of `columns`. */
  static ParquetFiles of(Dataset<Row> df, List<String> columns, int maxFiles) {
    LogicalPlan plan = df.queryExecution().analyzed();
    while (plan instanceof SubqueryAlias) { // a catalog table's name: the same rows
      plan = ((SubqueryAlias) plan).child();
    }
    if (!(plan instanceof LogicalRelation) || ((LogicalRelation) plan).isStreaming()) {
      return null;
    }
    if (!(((LogicalRelation) plan).relation() instanceof HadoopFsRelation)) {
      return null;
    }
    final HadoopFsRelation relation = (HadoopFsRelation) ((LogicalRelation) plan).relation();
    // exact classes: a subclass (Delta's file format, a catalog's pruned index) may add meaning
    if (relation.fileFormat().getClass() != ParquetFileFormat.class
        || relation.location().getClass() != InMemoryFileIndex.class) {
      return null;
    }
    final SQLConf conf = df.sparkSession().sessionState().conf();
    if (conf.ignoreCorruptFiles() || conf.ignoreMissingFiles()) {
      return null;
    }
    for (String key : JavaConverters.asJavaCollection(relation.options().keys())) {
      final String k = key.toLowerCase(Locale.ROOT);
      if (k.equals("ignorecorruptfiles") || k.equals("ignoremissingfiles")) {
        return null;
      }
    }
    final List<String> partitions = Arrays.asList(relation.partitionSchema().fieldNames());
    final StructType data = relation.dataSchema();
    for (String column : columns) {
      if (partitions.contains(column) || !Arrays.asList(data.fieldNames()).contains(column)) {
        return null;
      }
      // a field carrying a Parquet field id may be matched by id instead of by name
      if (conf.parquetFieldIdReadEnabled()
          && data.apply(column).metadata().contains("parquet.field.id")) {
        return null;
      }
    }
    final FileStatus[] files =
        JavaConverters.seqAsJavaList(((InMemoryFileIndex) relation.location()).allFiles())
            .toArray(new FileStatus[0]);
    if (maxFiles > 0 && files.length > maxFiles) {
      return null;
    }
    final Configuration hadoop =
        df.sparkSession().sessionState().newHadoopConfWithOptions(relation.options());
    return new ParquetFiles(files, hadoop, conf.caseSensitiveAnalysis(), data);
  }

  /** The files' total length. */
  long bytes() {
    long total = 0;
    for (FileStatus file : files) {
      total += file.getLen();
    }
    return total;
  }

  /**
   * `file` opened for reading, or null when it is no Parquet file or its footer is longer than
   * `maxFooterBytes` (a crafted length would have the reader allocate it).
   */
  static ParquetFileReader open(Configuration conf, FileStatus file, int maxFooterBytes)
      throws IOException {
    // from the index's status, not a path string: inputFiles() escapes a path ("%3A" in a
    // timestamp partition) that `new Path(String)` would escape again
    final HadoopInputFile input = HadoopInputFile.fromStatus(file, conf);
    final long length = input.getLength();
    if (length < 12) { // "PAR1", the footer's length, "PAR1": not a Parquet file
      return null;
    }
    final byte[] tail = new byte[8];
    try (SeekableInputStream in = input.newStream()) {
      in.seek(length - 8);
      in.readFully(tail);
    }
    final long footerLength = ByteBuffer.wrap(tail, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    if (footerLength < 0 || footerLength > maxFooterBytes || footerLength > length - 12) {
      return null;
    }
    // the options from the configuration at hand: ParquetFileReader.open(input) builds them
    // from a new Hadoop Configuration, which on Parquet 1.16 (Spark 4) parses Hadoop's XML
    // resources again for every file (~0.11 s of driver time per evaluation of 8 files)
    // and no filter that a configuration may set: row groups must keep the footer's numbering
    final ParquetReadOptions options =
        HadoopReadOptions.builder(conf)
            .withRecordFilter(FilterCompat.NOOP)
            .useRecordFilter(false)
            .useStatsFilter(false)
            .useDictionaryFilter(false)
            .useColumnIndexFilter(false)
            .useBloomFilter(false)
            .build();
    return ParquetFileReader.open(input, options);
  }

  /** How a file's columns are matched to the wanted names, as Spark's reader matches them. */
  static final class Names implements Serializable {
    private static final long serialVersionUID = 1L;
    private final String[] wanted;
    private final boolean caseSensitive;

    Names(List<String> wanted, boolean caseSensitive) {
      this.wanted = wanted.toArray(new String[0]);
      this.caseSensitive = caseSensitive;
    }

    int size() {
      return wanted.length;
    }

    /**
     * The file's field of each wanted column (null: the file lacks it, so it reads as null on
     * every row), or null when the file cannot answer: a nested field, or an ambiguous name,
     * which Spark's reader refuses (let the scan say so).
     */
    Type[] fields(MessageType schema) {
      final Type[] found = new Type[wanted.length];
      for (int i = 0; i < wanted.length; i++) {
        int matches = 0;
        for (Type field : schema.getFields()) {
          final String name = field.getName();
          if (caseSensitive ? name.equals(wanted[i]) : name.equalsIgnoreCase(wanted[i])) {
            if (!field.isPrimitive()) {
              return null;
            }
            found[i] = field;
            matches++;
          }
        }
        if (matches > 1) {
          return null;
        }
      }
      return found;
    }
  }

  /** The chunk of top-level column `name` in `block`, or null. */
  static ColumnChunkMetaData chunkOf(BlockMetaData block, String name) {
    for (ColumnChunkMetaData chunk : block.getColumns()) {
      final String[] path = chunk.getPath().toArray();
      if (path.length == 1 && path[0].equals(name)) {
        return chunk;
      }
    }
    return null;
  }
}
