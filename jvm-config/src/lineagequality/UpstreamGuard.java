package lineagequality;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.HiveTableRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;

import scala.Function1;
import scala.Option;
import scala.collection.JavaConverters;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * In-driver `attach(..., upstream="block")`: a check rule (`spark.sql.extensions`) that fails the
 * analysis of any query reading an unhealthy dataset, before anything is written.
 *
 * <p>The unhealthy datasets come from the health file the Python side keeps (lineage/guard.py):
 * one line per way a dataset can be read, `path<TAB>URI<TAB>message` (the dataset's location; a
 * read of it or of anything under it is refused) or `table<TAB>db.table<TAB>message`. The file's
 * path is the session's `spark.lineagequality.upstream.file`; a session without it (the
 * evaluation's own) is not guarded. The file is read again whenever it changes; a guarded session
 * whose file cannot be read refuses every read of a table or files: the guard fails closed.
 */
public final class UpstreamGuard extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  public static final String FILE_KEY = "spark.lineagequality.upstream.file";

  /** The exception a refused query fails with; its message names dataset, rule and run. */
  public static final class UpstreamBlocked extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    UpstreamBlocked(String message) {
      super(message);
    }
  }

  private static final class Health {
    final Map<String, String> paths = new HashMap<>();
    final Map<String, String> tables = new HashMap<>();
    final String key; // the file's path, size and time: read again when it changes

    Health(String key) {
      this.key = key;
    }
  }

  private static volatile Health health = new Health("");

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    @SuppressWarnings({"unchecked", "rawtypes"})
    final Function1 builder = new AbstractFunction1<Object, Function1<LogicalPlan, BoxedUnit>>() {
      @Override
      public Function1<LogicalPlan, BoxedUnit> apply(Object session) {
        return new AbstractFunction1<LogicalPlan, BoxedUnit>() {
          @Override
          public BoxedUnit apply(LogicalPlan plan) {
            check((SparkSession) session, plan);
            return BoxedUnit.UNIT;
          }
        };
      }
    };
    extensions.injectCheckRule(builder);
    return BoxedUnit.UNIT;
  }

  static void check(SparkSession session, LogicalPlan plan) {
    final String file = session.conf().get(FILE_KEY, "");
    if (file.isEmpty()) {
      return;
    }
    final List<String[]> reads = new ArrayList<>(); // {"path"|"table", name}
    collect(plan, reads, 0);
    if (reads.isEmpty()) {
      return;
    }
    final Health known;
    try {
      known = load(file);
    } catch (IOException | RuntimeException e) {
      throw new UpstreamBlocked(
          "lineage-quality upstream guard: cannot read the health file "
              + file
              + " ("
              + e
              + "); reads are refused until it can be read");
    }
    for (String[] read : reads) {
      final String found =
          "table".equals(read[0]) ? known.tables.get(read[1]) : underBlocked(known, read[1]);
      if (found != null) {
        throw new UpstreamBlocked(
            "lineage-quality: upstream=\"block\": this query reads an unhealthy dataset: " + found);
      }
    }
  }

  private static String underBlocked(Health known, String uri) {
    String at = normalized(uri);
    while (!at.isEmpty()) {
      final String found = known.paths.get(at);
      if (found != null) {
        return found;
      }
      final int slash = at.lastIndexOf('/');
      if (slash <= 0 || at.charAt(slash - 1) == '/' || at.charAt(slash - 1) == ':') {
        return null; // up to the root, the authority or the scheme: nothing above is a dataset
      }
      at = at.substring(0, slash);
    }
    return null;
  }

  /** One spelling for a location: s3a/s3n are s3, `file:///x` is `file:/x`, no trailing slash. */
  static String normalized(String uri) {
    String u = uri.trim();
    if (u.startsWith("s3a://") || u.startsWith("s3n://")) {
      u = "s3://" + u.substring(6);
    } else if (u.startsWith("file:///")) {
      u = "file:/" + u.substring(8);
    } else if (u.startsWith("/")) {
      u = "file:" + u;
    }
    while (u.length() > 1 && u.endsWith("/") && !u.endsWith("//")) {
      u = u.substring(0, u.length() - 1);
    }
    return u;
  }

  private static void collect(LogicalPlan node, List<String[]> reads, int depth) {
    if (depth > 10_000) {
      return;
    }
    if (node instanceof LogicalRelation) {
      final LogicalRelation relation = (LogicalRelation) node;
      if (relation.relation() instanceof HadoopFsRelation) {
        final HadoopFsRelation fs = (HadoopFsRelation) relation.relation();
        for (org.apache.hadoop.fs.Path root :
            JavaConverters.seqAsJavaList(fs.location().rootPaths())) {
          reads.add(new String[] {"path", root.toString()});
        }
      }
      table(relation.catalogTable(), reads);
    } else if (node instanceof HiveTableRelation) {
      table(Option.apply(((HiveTableRelation) node).tableMeta()), reads);
    } else if (node instanceof DataSourceV2Relation) {
      final DataSourceV2Relation relation = (DataSourceV2Relation) node;
      final Option<Identifier> id = relation.identifier();
      if (id.isDefined()) {
        final String[] space = id.get().namespace();
        final String name = id.get().name();
        reads.add(new String[] {"table", lower(name)});
        if (space.length > 0) {
          reads.add(new String[] {"table", lower(space[space.length - 1] + "." + name)});
        }
      }
      reads.add(new String[] {"table", lower(relation.table().name())});
    }
    for (LogicalPlan child : JavaConverters.seqAsJavaList(node.children())) {
      collect(child, reads, depth + 1);
    }
    for (LogicalPlan sub : JavaConverters.seqAsJavaList(node.subqueries())) {
      collect(sub, reads, depth + 1);
    }
  }

  private static void table(Option<CatalogTable> found, List<String[]> reads) {
    if (found.isEmpty()) {
      return;
    }
    final CatalogTable table = found.get();
    final TableIdentifier id = table.identifier();
    reads.add(new String[] {"table", lower(id.table())});
    if (id.database().isDefined()) {
      reads.add(new String[] {"table", lower(id.database().get() + "." + id.table())});
    }
    final Option<URI> location = table.storage().locationUri();
    if (location.isDefined()) {
      reads.add(new String[] {"path", location.get().toString()});
    }
  }

  private static String lower(String text) {
    return text.toLowerCase(Locale.ROOT);
  }

  private static Health load(String file) throws IOException {
    final Path path = Paths.get(file);
    final BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
    final String key =
        file
            + "|"
            + attributes.fileKey()
            + "|"
            + attributes.size()
            + "|"
            + attributes.lastModifiedTime().toMillis();
    final Health cached = health;
    if (cached.key.equals(key)) {
      return cached;
    }
    final Health fresh = new Health(key);
    for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
      final String[] parts = line.split("\t", 3);
      if (parts.length < 3) {
        continue;
      }
      if ("path".equals(parts[0])) {
        fresh.paths.put(normalized(parts[1]), parts[2]);
      } else if ("table".equals(parts[0])) {
        fresh.tables.put(lower(parts[1]), parts[2]);
      }
    }
    health = fresh;
    return fresh;
  }
}
