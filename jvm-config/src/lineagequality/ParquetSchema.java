package lineagequality;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.Footer;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;
import org.apache.spark.sql.catalyst.util.CharVarcharUtils;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The data schema `spark.read.parquet(paths)` would infer, read in the driver. Without a schema,
 * Spark's reader starts a Spark job to read one footer (ParquetFileFormat.mergeSchemasInParallel
 * parallelizes even a single file): ~40 ms of every evaluation of a plain Parquet dataset,
 * whatever its size. This reads the same footer the same way (the first data file by path, the
 * session's conversion settings, the schema Spark wrote into the footer where there is one) and
 * the caller hands the schema to the reader.
 *
 * <p>Where it could differ from Spark's own inference it answers null and the caller lets Spark
 * infer: schema merging on, glob patterns, summary files (`_metadata`, `_common_metadata`) or a
 * streaming sink's log (`_spark_metadata`), which Spark reads instead of the data files; a
 * folder below the dataset's that is no partition (`name=value`: Spark reads only the top
 * folder's files of a dataset without partitions); a partition folder named like a column of the
 * file (Spark places and types such a column otherwise when the schema is given); CHAR or
 * VARCHAR columns; a filesystem other than the local one or HDFS (an object store's listing and
 * status requests cost more than the job), or a tree of more than MAX_LISTED entries; any footer
 * that does not read (Spark then reports it, or skips it under ignoreCorruptFiles, as it would
 * have).
 */
public final class ParquetSchema {
  private ParquetSchema() {}

  private static final String GLOB = "{}[]*?\\";
  // entries listed below a folder before it is left to Spark: a wide tree listed twice (here,
  // then by the reader) would cost more than the job saved
  private static final int MAX_LISTED = 10_000;

  /**
   * The schema of `paths` as given to the reader: one folder, or data files (`base`, the
   * reader's basePath or null, is where their partition directories start). `paths` comes in one
   * string, each path as {@code LENGTH:path} (its length in code points): one py4j call
   * whatever their number.
   */
  public static StructType of(SparkSession session, String paths, String base) {
    try {
      return inferred(session, decoded(paths), base);
    } catch (IOException | RuntimeException e) {
      return null; // Spark infers it, and reports what is wrong with its own words
    }
  }

  static String[] decoded(String paths) {
    final List<String> out = new ArrayList<>();
    int at = 0;
    while (at < paths.length()) {
      final int colon = paths.indexOf(':', at);
      final int count = Integer.parseInt(paths.substring(at, colon));
      final int end = paths.offsetByCodePoints(colon + 1, count);
      out.add(paths.substring(colon + 1, end));
      at = end;
    }
    return out.toArray(new String[0]);
  }

  private static StructType inferred(SparkSession session, String[] paths, String base)
      throws IOException {
    final SQLConf conf = session.sessionState().conf();
    if (paths.length == 0 || conf.isParquetSchemaMergingEnabled()) {
      return null;
    }
    for (String p : paths) {
      if (globbed(p)) {
        return null;
      }
    }
    if (base != null && globbed(base)) {
      return null;
    }
    final Configuration hadoop = session.sessionState().newHadoopConf();
    // The first path by its qualified name, as Spark sorts the files it lists: only that one is
    // looked at (a file's status is a request of its own on some filesystems). A file given
    // sorts before every file below a folder that sorts after it; a folder first among several
    // paths is left to Spark.
    final Path[] qualified = new Path[paths.length];
    Path least = null;
    FileSystem leastFs = null;
    for (int i = 0; i < paths.length; i++) {
      final Path path = new Path(paths[i]);
      final FileSystem fs = path.getFileSystem(hadoop);
      final String scheme = fs.getUri().getScheme();
      if (!"file".equals(scheme) && !"hdfs".equals(scheme)) {
        return null; // an object store: its requests cost more than the job
      }
      qualified[i] = fs.makeQualified(path);
      if (summary(qualified[i].getName())) {
        return null; // named, a summary file is listed, and Spark prefers its schema
      }
      if (least == null || qualified[i].toString().compareTo(least.toString()) < 0) {
        least = qualified[i];
        leastFs = fs;
      }
    }
    // Partition folders' names, lower-cased (raw and unescaped): a column of the file named
    // alike is placed and typed otherwise once the schema is given, so Spark infers then.
    final Set<String> keys = new HashSet<>();
    final FileStatus top = leastFs.getFileStatus(least);
    final FileStatus first;
    if (top.isDirectory()) {
      if (paths.length > 1) {
        return null;
      }
      first = firstBelow(leastFs, top.getPath(), keys);
    } else if (top.isFile()
        && !FileListing.hidden(top.getPath().getName())
        && partitions(qualified, base, hadoop, keys)) {
      first = top;
    } else {
      first = null;
    }
    if (first == null) {
      return null;
    }
    final StructType schema =
        ParquetFileFormat.readSchemaFromFooter(
            new Footer(first.getPath(), Line.footer(hadoop, first)), Line.schemaConverter(conf));
    // CHAR and VARCHAR types (Spark 4 may keep them in the footer) are refused or turned into
    // strings by a reader given them; Spark's inference keeps them as they are
    if (CharVarcharUtils.hasCharVarchar(schema)) {
      return null;
    }
    for (StructField field : schema.fields()) {
      if (keys.contains(field.name().toLowerCase(Locale.ROOT))) {
        return null;
      }
    }
    return schema;
  }

  /**
   * The first data file below a folder by path, as Spark's file index lists it (names starting
   * with '.', or with '_' and no '=', left out, with their folders), with the partition folders'
   * names into `keys`; null where Spark would read other files than this finds: a summary file
   * or a streaming sink's log instead of the data files, or a folder that is no partition
   * (`name=value`), whose files Spark leaves out of an unpartitioned folder. Listed folder by
   * folder with plain statuses, as Spark lists a local folder: the located statuses of
   * `listFiles` read each file's permissions, a process of its own per file without Hadoop's
   * native library. Past MAX_LISTED entries, Spark lists it.
   */
  private static FileStatus firstBelow(FileSystem fs, Path root, Set<String> keys)
      throws IOException {
    FileStatus first = null;
    int listed = 0;
    final ArrayDeque<Path> folders = new ArrayDeque<>();
    folders.add(root);
    while (!folders.isEmpty()) {
      final FileStatus[] children;
      try {
        children = fs.listStatus(folders.poll());
      } catch (FileNotFoundException gone) {
        return null; // deleted meanwhile: Spark decides what that means
      }
      listed += children.length;
      if (listed > MAX_LISTED) {
        return null;
      }
      for (FileStatus child : children) {
        final String name = child.getPath().getName();
        if (summary(name) || name.equals("_spark_metadata")) {
          return null;
        }
        if (FileListing.hidden(name)) {
          continue;
        }
        if (child.isDirectory()) {
          if (!addKey(name, keys)) {
            return null;
          }
          folders.add(child.getPath());
        } else if (first == null
            || child.getPath().toString().compareTo(first.getPath().toString()) < 0) {
          first = child;
        }
      }
    }
    return first;
  }

  /**
   * Whether the files' folders below `base` are all partition folders (`name=value`), their
   * names into `keys`; without a base there are none (each file's folder is its own base).
   */
  private static boolean partitions(
      Path[] files, String base, Configuration hadoop, Set<String> keys) throws IOException {
    if (base == null) {
      return files.length == 1;
    }
    final Path b = new Path(base);
    final String prefix = b.getFileSystem(hadoop).makeQualified(b).toString();
    for (Path file : files) {
      final String dir = file.getParent().toString();
      if (!dir.startsWith(prefix)) {
        return false; // outside its base: Spark's partition discovery decides
      }
      for (String part : dir.substring(prefix.length()).split("/")) {
        if (!part.isEmpty() && !addKey(part, keys)) {
          return false;
        }
      }
    }
    return true;
  }

  /** A partition folder's name into `keys` (raw and unescaped); false for another folder. */
  private static boolean addKey(String folder, Set<String> keys) {
    final int eq = folder.indexOf('=');
    if (eq <= 0) {
      return false;
    }
    final String key = folder.substring(0, eq);
    keys.add(key.toLowerCase(Locale.ROOT));
    keys.add(ExternalCatalogUtils.unescapePathName(key).toLowerCase(Locale.ROOT));
    return true;
  }

  /** Parquet summary files, which Spark lists and prefers for the schema. */
  private static boolean summary(String name) {
    return name.startsWith("_metadata") || name.startsWith("_common_metadata");
  }

  private static boolean globbed(String path) {
    for (int i = 0; i < path.length(); i++) {
      if (GLOB.indexOf(path.charAt(i)) >= 0) {
        return true;
      }
    }
    return false;
  }
}
