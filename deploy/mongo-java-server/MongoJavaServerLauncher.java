import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.EmptyIndex;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import de.bwaldvogel.mongo.wire.MongoDatabaseHandler;
import de.bwaldvogel.mongo.wire.MongoExceptionHandler;
import de.bwaldvogel.mongo.wire.MongoWireMessageEncoder;
import de.bwaldvogel.mongo.wire.MongoWireProtocolHandler;
import de.bwaldvogel.mongo.wire.MongoWireReplyEncoder;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.ObjectDataType;

/**
 * Runs mongo-java-server on a loopback port, with one of two backends:
 *
 *   java -cp "lib/*" MongoJavaServerLauncher memory HOST PORT        (the test server: nothing on disk)
 *   java -cp "lib/*" MongoJavaServerLauncher h2 HOST PORT FILE       (durable: every write committed)
 *
 * The server reports MongoDB 4.0 (wire version 7) by default, which the Node.js driver refuses (it
 * needs wire version 9, MongoDB 4.4, or newer); it announces 4.4 instead. The commands the service
 * uses are the same in both.
 *
 * One thread per connection (decision 985). mongo-java-server's own bind() runs every command on the
 * network event loop that owns the connection: 2 x cores threads, each shared by many connections. A
 * collection is locked for a whole query (its queries, counts and writes run one at a time), so a few
 * slow scans of one collection held every event-loop thread, each waiting for the lock, and the
 * connections sharing those threads got no answer at all, the driver's monitor included: its `hello`
 * timed out, the driver marked the server unknown and failed every operation in flight. Here the
 * event loops only read and write bytes; each connection's commands run in order on a thread of its
 * own (as mongod does), so a connection waiting for a lock delays nobody else's commands.
 *
 * H2: the MVStore commits by itself only once a second (autoCommitDelay), so a kill -9 lost the
 * writes of the last second although the client had been told they were done. This launcher owns the
 * store's settings: a write command is answered only after the store committed it (the commit writes
 * the chunk to the file, so a killed process loses nothing it acknowledged; an fsync per write is not
 * made, so a power cut may still lose the operating system's unwritten pages). Concurrent writers share
 * commits: one commit stores every change made before it. The background thread stays on (it commits
 * nothing left, and compacts the file). The store's page cache is sized from the heap
 * (-Dmongo.h2.cacheMb=N to choose; decision 985): its default of 16 MB held about 1% of a 100,000-user
 * collection, so every scan read and deserialised the documents from the file again.
 */
public class MongoJavaServerLauncher {
  private static final MongoVersion V44 = new MongoVersion() {
    public List<Integer> getVersionArray() { return List.of(4, 4, 0); }
    public int getWireVersion() { return 9; }
  };

  /**
   * Queries that name every key of a unique index (the `_id` index included) and also filter other
   * fields: a guarded update (`{_id, status}`), a fenced write (`{_id, $or: [epoch...]}`), a membership
   * check (`{_id, $or: [organizer, participant]}`), a lookup by a unique field and a state. mongo-java-server
   * answers a query from an index only when the query names exactly that index's keys (its
   * AbstractUniqueIndex.canHandle), so each of these read and matched every document of the collection:
   * 40-150 ms at 100,000 events on the embedded default, against 1-2 ms by `_id` alone (decision 1161).
   * Here the index gives the documents of its keys' values, and the whole query is matched against them
   * exactly as against a full scan's documents (AbstractMongoCollection.matchDocuments with positions,
   * the path of mongo-java-server's own index lookups): the same documents, fewer read.
   */
  static final class IndexedQueries {
    /** Queries answered by mongo-java-server's own index lookup, by an index and a residual filter, by a scan. */
    static final AtomicLong EXACT = new AtomicLong();
    static final AtomicLong RESIDUAL = new AtomicLong();
    static final AtomicLong SCANNED = new AtomicLong();
    /** Scans by collection and query shape (its top-level keys; values left out): where an index would serve. */
    static final Map<String, AtomicLong> SCANS = new ConcurrentHashMap<>();
    private static final int SHAPES = 1_000;

    static final AtomicLong SECONDARY = new AtomicLong();
    static final AtomicLong UNION = new AtomicLong();
    static final AtomicLong CONJUNCTION = new AtomicLong();
    static final AtomicLong COUNTED = new AtomicLong();

    /**
     * A collection's query, planned here first: `fromIndex` matches the query against given positions,
     * `asBefore` is mongo-java-server's; `all` streams the collection (a secondary index's first build) and
     * `natural` orders positions as a scan meets them.
     */
    static <P> QueryResult query(MongoCollection<P> collection, Document query, Supplier<Stream<DocumentWithPosition<P>>> all,
        Comparator<P> natural, Function<Iterable<P>, QueryResult> fromIndex, Supplier<QueryResult> inIdOrder,
        Supplier<QueryResult> asBefore) {
      for (Index<P> index : collection.getIndexes()) {
        if (index.canHandle(query)) {
          EXACT.incrementAndGet();
          return asBefore.get();
        }
      }
      // A range of `_id` with both bounds is read from the key order first (decision 1173): it needs no
      // index held in memory, where another condition's index (a compound unique index's first key,
      // decision 1174) would be built on first use and kept for every document.
      if (query.get("_id") instanceof Document range && (range.containsKey("$gt") || range.containsKey("$gte"))
          && (range.containsKey("$lt") || range.containsKey("$lte"))) {
        QueryResult ordered = inIdOrder.get();
        if (ordered != null) return ordered;
      }
      // An index's documents are fetched one by one (a B-tree look-up each on H2): past a quarter of the
      // collection a scan, which reads the documents in order, is the cheaper way (decision 1162).
      int most = Math.max(64, collection.count() / 4);
      Plan<P> plan = candidates(collection.getIndexes(), query, all, natural, most);
      if (plan != null) {
        plan.way().incrementAndGet();
        return fromIndex.apply(plan.positions());
      }
      // No index narrows it: the first documents in `_id` order when that is what is asked (IdOrder).
      QueryResult ordered = inIdOrder.get();
      if (ordered != null) return ordered;
      SCANNED.incrementAndGet();
      String shape = collection.getCollectionName() + " " + query.keySet();
      AtomicLong seen = SCANS.get(shape);
      if (seen == null && SCANS.size() < SHAPES) seen = SCANS.computeIfAbsent(shape, k -> new AtomicLong());
      if (seen != null) seen.incrementAndGet();
      return asBefore.get();
    }

    /** Positions to match a query against, and the counter of the way they were found. */
    private record Plan<P>(Iterable<P> positions, AtomicLong way) {}

    /**
     * The positions to match `query` against, from a unique index all of whose keys it names, a secondary
     * index, a union of indexed branches, or the narrowest indexed branch of a conjunction; null when
     * none narrows it (a scan).
     */
    static <P> Plan<P> candidates(List<Index<P>> indexes, Document query,
        Supplier<Stream<DocumentWithPosition<P>>> all, Comparator<P> natural, int most) {
      Iterable<P> residual = residual(indexes, query);
      if (residual != null) return new Plan<>(residual, RESIDUAL);
      Iterable<P> secondary = SecondaryIndex.candidates(indexes, query, all, natural, most);
      if (secondary != null) return new Plan<>(secondary, SECONDARY);
      Iterable<P> union = union(indexes, query, all, natural, most);
      if (union != null) return new Plan<>(union, UNION);
      Iterable<P> conjunction = conjunction(indexes, query, all, natural, most);
      if (conjunction != null) return new Plan<>(conjunction, CONJUNCTION);
      return null;
    }

    /**
     * Decision 1175: a top-level `$and` (an event list's next page: who may see it, and after the last
     * event of the page before) read every document of its collection. Each branch is planned as a query
     * of its own (an index of its keys, then `candidates`); the branch with the fewest positions gives
     * them, in the order a scan meets them. Every document the query matches matches every branch, so
     * it is among them. Null when no branch is narrowed.
     */
    private static <P> Iterable<P> conjunction(List<Index<P>> indexes, Document query,
        Supplier<Stream<DocumentWithPosition<P>>> all, Comparator<P> natural, int most) {
      if (!(query.get("$and") instanceof List<?> branches) || branches.isEmpty()) return null;
      List<P> best = null;
      for (Object branch : branches) {
        if (!(branch instanceof Document b)) return null;
        Iterable<P> found = null;
        for (Index<P> index : indexes) if (index.canHandle(b)) { found = index.getPositions(b); break; }
        if (found == null) {
          Plan<P> plan = candidates(indexes, b, all, natural, most);
          if (plan != null) found = plan.positions();
        }
        if (found == null) continue;
        List<P> listed = new ArrayList<>();
        found.forEach(listed::add);
        if (best == null || listed.size() < best.size()) best = listed;
      }
      if (best == null || best.size() > most) return null;
      best.sort(natural);
      return best;
    }

    /**
     * From a unique index all of whose keys the query names (and more): its documents of those values, or
     * null. The index's own rules decide which values it can look up (a value, `$in` on one key, a regex).
     */
    private static <P> Iterable<P> residual(List<Index<P>> indexes, Document query) {
      for (Index<P> index : indexes) {
        if (!index.isUnique()) continue;
        Document keys = new Document();
        for (IndexKey key : index.getKeys()) {
          if (!query.containsKey(key.getKey())) {
            keys = null;
            break;
          }
          keys.put(key.getKey(), query.get(key.getKey()));
        }
        if (keys != null && keys.size() < query.size() && index.canHandle(keys)) return index.getPositions(keys);
      }
      return null;
    }

    /**
     * A top-level `$or` whose every branch an index answers (by its keys, a unique index and more, or a
     * non-unique one): the union of the branches' documents, in the order a scan meets them; else null.
     * Every document the query matches matches a branch, so it is among them.
     */
    private static <P> Iterable<P> union(List<Index<P>> indexes, Document query, Supplier<Stream<DocumentWithPosition<P>>> all,
        Comparator<P> natural, int most) {
      if (!(query.get("$or") instanceof List<?> branches) || branches.isEmpty()) return null;
      Set<P> out = new LinkedHashSet<>();
      for (Object branch : branches) {
        if (!(branch instanceof Document b)) return null;
        Iterable<P> found = null;
        for (Index<P> index : indexes) if (index.canHandle(b)) { found = index.getPositions(b); break; }
        if (found == null) found = residual(indexes, b);
        if (found == null) found = SecondaryIndex.candidates(indexes, b, all, natural, most);
        if (found == null) return null;
        found.forEach(out::add);
        if (out.size() > most) return null;
      }
      List<P> ordered = new ArrayList<>(out);
      ordered.sort(natural);
      return ordered;
    }

    /**
     * `countDocuments` sends an aggregation (`$match`, then `$group` of everything into one count), which
     * mongo-java-server runs over every document of the collection. The same count through the
     * collection's own count (the query planned above), answered as the aggregation would be; any other
     * pipeline is left to mongo-java-server (null).
     */
    static Document count(MongoBackend backend, String db, String command, Document request) {
      if (!"aggregate".equalsIgnoreCase(command) || !(request.get("aggregate") instanceof String name)
          || !(request.get("pipeline") instanceof List<?> stages) || stages.size() < 2
          || request.containsKey("collation") || request.containsKey("hint")) return null;
      if (!(stages.get(0) instanceof Document match) || match.size() != 1 || !(match.get("$match") instanceof Document query))
        return null;
      int skip = 0;
      int limit = 0;
      for (Object stage : stages.subList(1, stages.size() - 1)) {
        if (!(stage instanceof Document d) || d.size() != 1) return null;
        if (d.get("$skip") instanceof Number n && limit == 0) skip = n.intValue();
        else if (d.get("$limit") instanceof Number n) limit = n.intValue();
        else return null;
      }
      if (!(stages.get(stages.size() - 1) instanceof Document group) || group.size() != 1
          || !(group.get("$group") instanceof Document g) || g.size() != 2 || !(g.get("_id") instanceof Number one)
          || one.intValue() != 1 || !(g.get("n") instanceof Document sum) || sum.size() != 1
          || !(sum.get("$sum") instanceof Number by) || by.intValue() != 1) return null;
      MongoCollection<?> collection = backend.resolveDatabase(db).resolveCollection(name, false);
      int n = 0;
      // The collection's lock, as its queries and writes take it (count is not one of them).
      if (collection != null) synchronized (collection) { n = collection.count(query, skip, limit); }
      List<Document> batch = new ArrayList<>();
      if (n > 0) batch.add(new Document("_id", 1).append("n", n));
      Document cursor = new Document("id", 0L).append("ns", db + "." + name).append("firstBatch", batch);
      Document reply = new Document("cursor", cursor);
      Utils.markOkay(reply);
      COUNTED.incrementAndGet();
      return reply;
    }

    /**
     * The `indexUse` command: how queries were answered since the server started, and the 50 most frequent
     * shapes of the scans (collection and top-level keys), for tests and operators.
     */
    static Document command(String command) {
      if ("launcherInfo".equalsIgnoreCase(command)) return launcherInfo();
      if (!"indexUse".equalsIgnoreCase(command)) return null;
      Document reply = new Document();
      reply.put("exact", EXACT.get());
      reply.put("residual", RESIDUAL.get());
      reply.put("secondary", SECONDARY.get());
      reply.put("union", UNION.get());
      reply.put("conjunction", CONJUNCTION.get());
      reply.put("counted", COUNTED.get());
      reply.put("ordered", IdOrder.ORDERED.get());
      reply.put("scanned", SCANNED.get());
      reply.put("secondaryEntries", SecondaryIndex.ENTRIES.get());
      Document shapes = new Document();
      SCANS.entrySet().stream()
          .sorted((a, b) -> Long.compare(b.getValue().get(), a.getValue().get()))
          .limit(50)
          .forEach(e -> shapes.put(e.getKey(), e.getValue().get()));
      reply.put("scans", shapes);
      Utils.markOkay(reply);
      return reply;
    }

    /**
     * The `launcherInfo` command: the launcher source this server runs (`-Dlauncher.source`, a digest of
     * MongoJavaServerLauncher.java that scripts/services.mjs passes), so a test server kept running between
     * runs is started again when the checkout's launcher changed (decision 1177); empty when not given.
     */
    static Document launcherInfo() {
      Document reply = new Document();
      reply.put("launcher", System.getProperty("launcher.source", ""));
      Utils.markOkay(reply);
      return reply;
    }
  }

  /**
   * A non-unique index (decision 1162). mongo-java-server keeps none (an EmptyIndex that answers nothing),
   * so a query by a non-unique field read every document of its collection. This one holds, in memory,
   * the documents of each value of the index's first key (a multikey index has one entry per array
   * element, as mongo-java-server's unique indexes compute them), and gives the documents of the values
   * a query names for that key; the whole query is then matched against them (IndexedQueries).
   * - Built on first use, from the collection, in one pass under the collection's lock (a query that
   *   would use it pays one scan, as every such query did before); kept current by every write after.
   *   Nothing is written to the file: a restart builds it again when it is first needed, from the
   *   documents the file holds, so it cannot disagree with them.
   * - Past -Dmongo.secondaryIndexMaxEntries entries held by all of them (default: an eighth of the heap)
   *   the index being filled gives up (its entries freed) and its queries scan until a restart.
   * - Answers a value or `$in` of values on the first key; not null, a regex, an array or a document
   *   (equalities whose matching rules differ from an element's): those scan.
   */
  static final class SecondaryIndex<P> extends Index<P> {
    /**
     * Entries all secondary indexes together may hold: about 320 bytes of heap each (200,000 entries of
     * 64-character values took 62 MB), an eighth of the heap by default (1.2 million at -Xmx3g).
     */
    private static final long MAX_ENTRIES =
        Long.getLong("mongo.secondaryIndexMaxEntries", Runtime.getRuntime().maxMemory() / 8 / 320);
    /** An index over a query's value alone: its values go through the normalisation a document's do. */
    private static final Index<Object> QUERY_VALUE = new EmptyIndex<>("query", List.of(new IndexKey("v", true)));
    private static final Index<Object> ID = new EmptyIndex<>("id", List.of(new IndexKey("_id", true)));
    /** Entries held by every secondary index of the server (the `indexUse` command's `secondaryEntries`). */
    static final AtomicLong ENTRIES = new AtomicLong();

    /** The index's first key alone: a document's values for it, computed as mongo-java-server's indexes do. */
    private final Index<P> first;
    /** Documents (by `_id`, with their position) for each value; null until built. */
    private Map<KeyValue, Map<KeyValue, P>> entries;
    private long size;
    private boolean refused;

    /**
     * Sparse to mongo-java-server whatever it was created as, as its EmptyIndex is: a document without a
     * value for the key (or any document before the build) has no entry, and a removal finds none.
     */
    SecondaryIndex(String name, List<IndexKey> keys) {
      super(name, keys, true);
      this.first = new EmptyIndex<>(name, List.of(keys.get(0)));
    }

    /**
     * The positions a query's documents are among, in the order a scan meets them, from the built (or now
     * built) secondary index whose first key's values the query names and which holds the fewest; null
     * when no secondary index answers it, or when even the fewest are more than `most` (a scan is cheaper).
     */
    static <P> Iterable<P> candidates(List<Index<P>> indexes, Document query, Supplier<Stream<DocumentWithPosition<P>>> all,
        Comparator<P> natural, int most) {
      List<SecondaryIndex<P>> usable = new ArrayList<>();
      for (Index<P> index : indexes) {
        SecondaryIndex<P> s = index instanceof SecondaryIndex<P> own ? own
            : index instanceof PrefixedUniqueIndex<P> compound ? compound.prefix : null;
        if (s != null && !s.refused && query.containsKey(s.firstKey())
            && (values(query.get(s.firstKey())) != null || isRange(query.get(s.firstKey())))) usable.add(s);
      }
      if (usable.isEmpty()) return null;
      List<SecondaryIndex<P>> unbuilt = usable.stream().filter(s -> s.entries == null).toList();
      if (!unbuilt.isEmpty()) build(unbuilt, all.get());
      Collection<P> best = null;
      for (SecondaryIndex<P> s : usable) {
        if (s.refused) continue;
        Set<KeyValue> named = values(query.get(s.firstKey()));
        Collection<P> positions = named != null ? s.positions(named) : s.allPositions();
        if (best == null || positions.size() < best.size()) best = positions;
      }
      if (best == null || best.size() > most) return null;
      List<P> ordered = new ArrayList<>(best);
      ordered.sort(natural);
      return ordered;
    }

    /** Builds the indexes in one pass over the collection's documents. */
    private static <P> void build(List<SecondaryIndex<P>> indexes, Stream<DocumentWithPosition<P>> documents) {
      for (SecondaryIndex<P> s : indexes) s.entries = new HashMap<>();
      documents.forEach(d -> {
        for (SecondaryIndex<P> s : indexes) if (!s.refused) s.put(d.getDocument(), d.getPosition());
      });
    }

    private String firstKey() { return getKeys().get(0).getKey(); }

    /** The normalised values a query value names (a value, or `$in` of values), or null when it names none this index answers. */
    private static Set<KeyValue> values(Object queried) {
      Collection<?> listed;
      if (queried instanceof Document d) {
        if (d.size() != 1 || !(d.get("$in") instanceof Collection<?> in)) return null;
        listed = in;
      } else {
        listed = List.of(queried == null ? Missing.getInstance() : queried);
      }
      Set<KeyValue> out = new LinkedHashSet<>();
      for (Object v : listed) {
        if (Missing.isNullOrMissing(v) || v instanceof Document || v instanceof Collection || v instanceof Pattern
            || BsonRegularExpression.isRegularExpression(v)) return null;
        out.addAll(QUERY_VALUE.getKeyValues(new Document("v", v)));
      }
      return out;
    }

    /**
     * A range (`$gt`, `$gte`, `$lt`, `$lte`, alone or together) with bounds that are values: a document it
     * matches has a value for the key, so it is among the index's documents (all of them are the
     * candidates, and the whole query is matched against them). A null bound (which matches a missing
     * field), or a document, array or pattern as a bound, is not: null, and the query scans. The relay's
     * look for pending announcements (`{'outbox.at': {$gte: ...}}`) is one: the index holds only the
     * documents whose outbox is not empty, where a scan read every telemetry record.
     */
    private static boolean isRange(Object queried) {
      if (!(queried instanceof Document d) || d.isEmpty() || d.size() > 2) return false;
      for (Map.Entry<String, Object> op : d.entrySet()) {
        if (!Set.of("$gt", "$gte", "$lt", "$lte").contains(op.getKey())) return false;
        Object v = op.getValue();
        if (Missing.isNullOrMissing(v) || v instanceof Document || v instanceof Collection || v instanceof Pattern
            || BsonRegularExpression.isRegularExpression(v)) return false;
      }
      return true;
    }

    /** The positions of every document the index holds (each once). */
    private synchronized Collection<P> allPositions() {
      Set<P> out = new LinkedHashSet<>();
      for (Map<KeyValue, P> docs : entries.values()) out.addAll(docs.values());
      return out;
    }

    private Set<KeyValue> valuesOf(Document document) {
      Set<KeyValue> out = new LinkedHashSet<>();
      for (KeyValue kv : first.getKeyValues(document))
        if (kv.size() == 1 && !Missing.isNullOrMissing(kv.get(0))) out.add(kv);
      return out;
    }

    private static KeyValue idOf(Document document) {
      return ID.getKeyValues(document).iterator().next();
    }

    private synchronized Collection<P> positions(Set<KeyValue> values) {
      Set<P> out = new LinkedHashSet<>();
      for (KeyValue v : values) {
        Map<KeyValue, P> docs = entries.get(v);
        if (docs != null) out.addAll(docs.values());
      }
      return out;
    }

    private synchronized void put(Document document, P position) {
      if (entries == null || refused) return;
      KeyValue id = idOf(document);
      for (KeyValue v : valuesOf(document))
        if (entries.computeIfAbsent(v, k -> new HashMap<>(2)).put(id, position) == null) {
          size++;
          ENTRIES.incrementAndGet();
        }
      if (ENTRIES.get() > MAX_ENTRIES) {
        // Past the budget: this index's queries scan, as mongo-java-server's did.
        refused = true;
        entries = null;
        ENTRIES.addAndGet(-size);
        size = 0;
        System.err.println("secondary index " + getName() + ": the secondary indexes passed " + MAX_ENTRIES
            + " entries; its queries scan (-Dmongo.secondaryIndexMaxEntries)");
      }
    }

    private synchronized P take(Document document) {
      if (entries == null) return null;
      KeyValue id = idOf(document);
      P removed = null;
      for (KeyValue v : valuesOf(document)) {
        Map<KeyValue, P> docs = entries.get(v);
        if (docs == null) continue;
        P p = docs.remove(id);
        if (p != null) {
          removed = p;
          size--;
          ENTRIES.decrementAndGet();
          if (docs.isEmpty()) entries.remove(v);
        }
      }
      return removed;
    }

    @Override public P getPosition(Document document) { return null; }
    @Override public void checkAdd(Document document, MongoCollection<P> collection) {}
    @Override public void add(Document document, P position, MongoCollection<P> collection) { put(document, position); }
    @Override public P remove(Document document) { return take(document); }
    /** Answered through IndexedQueries only (mongo-java-server's own planning would give it whole queries). */
    @Override public boolean canHandle(Document query) { return false; }
    @Override public Iterable<P> getPositions(Document query) { throw new UnsupportedOperationException(); }
    @Override public synchronized long getCount() { return size; }
    /** Not empty to mongo-java-server, which would otherwise read the collection twice to fill it at every open. */
    @Override public boolean isEmpty() { return false; }
    @Override public long getDataSize() { return 0; }
    @Override public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<P> collection) {}
    @Override public boolean isUnique() { return false; }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, P position, MongoCollection<P> collection) {
      // Not built (or given up): nothing to keep current, and no values to compute for every update.
      if (entries == null || valuesOf(oldDocument).equals(valuesOf(newDocument))) return;
      take(oldDocument);
      put(newDocument, position);
    }

    @Override
    public synchronized void drop() {
      entries = null;
      ENTRIES.addAndGet(-size);
      size = 0;
    }
  }

  /**
   * Decision 1174: a compound unique index answers queries by its first key, as MongoDB's indexes answer
   * their prefixes. mongo-java-server's unique index answers only a query that names every one of its
   * keys with a value, so a user's favourites (`{userId}` of the `{userId, contactId}` index, and
   * `{userId, contactId: {$in}}` beside every contact search page), an event's participant log
   * (`{eventId}` of `{eventId, participantKey, joinedAt}`) and a file's grants (`{hash}`) read every
   * document of their collection. Each compound unique index carries a SecondaryIndex of its first key
   * (decision 1162: in memory, built on first use, kept current by every write after, within the same
   * budget), which IndexedQueries takes as it takes a non-unique index's; everything else is the
   * unique index's own (its checks, its lookups, its description).
   */
  static final class PrefixedUniqueIndex<P> extends Index<P> {
    private final Index<P> unique;
    final SecondaryIndex<P> prefix;

    private PrefixedUniqueIndex(Index<P> unique, boolean sparse) {
      super(unique.getName(), unique.getKeys(), sparse);
      this.unique = unique;
      this.prefix = new SecondaryIndex<>(unique.getName() + " (first key)", unique.getKeys());
    }

    /** The index as opened, with a first key's index when it has more than one key. */
    static <P> Index<P> of(Index<P> unique, boolean sparse) {
      return unique.getKeys().size() > 1 ? new PrefixedUniqueIndex<>(unique, sparse) : unique;
    }

    @Override public P getPosition(Document document) { return unique.getPosition(document); }
    @Override public void checkAdd(Document document, MongoCollection<P> collection) { unique.checkAdd(document, collection); }
    @Override public void add(Document document, P position, MongoCollection<P> collection) {
      unique.add(document, position, collection);
      prefix.add(document, position, collection);
    }
    @Override public P remove(Document document) {
      prefix.remove(document);
      return unique.remove(document);
    }
    @Override public boolean canHandle(Document query) { return unique.canHandle(query); }
    @Override public Iterable<P> getPositions(Document query) { return unique.getPositions(query); }
    @Override public long getCount() { return unique.getCount(); }
    @Override public boolean isEmpty() { return unique.isEmpty(); }
    @Override public long getDataSize() { return unique.getDataSize(); }
    @Override public Set<KeyValue> getKeyValues(Document document) { return unique.getKeyValues(document); }
    @Override public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<P> collection) {
      unique.checkUpdate(oldDocument, newDocument, collection);
    }
    @Override public void updateInPlace(Document oldDocument, Document newDocument, P position, MongoCollection<P> collection) {
      unique.updateInPlace(oldDocument, newDocument, position, collection);
      prefix.updateInPlace(oldDocument, newDocument, position, collection);
    }
    @Override public void drop() {
      prefix.drop();
      unique.drop();
    }
    @Override public boolean isUnique() { return true; }
  }

  /**
   * Decision 1173: the first documents of a collection in `_id` order, read from the map that holds them.
   * An H2 collection keeps its documents in an MVMap keyed by their `_id`, in H2's order of those keys:
   * by the key's Java type first (Integer, then Long, then Double; strings and serialised values after
   * them), then by value within a type. mongo-java-server answers a sort by `_id` by reading, matching
   * and sorting every document, so `find({_id: {$gt: n}}).sort({_id: 1}).limit(500)` (the audit trail's
   * checkpoint and verification, read in batches) and `find({}).sort({_id: -1}).limit(50)` (its newest
   * page) read the whole trail at every call, under the collection's lock that every append waits for.
   * Here such a query (a sort by `_id` alone, a limit, and no condition on `_id` or a range of numbers)
   * walks each numeric type's keys in the asked direction from the range's bound, matches each document
   * against the whole query as a scan does, and stops at `skip + limit` matches in each type: the merged
   * first ones are among them, and mongo-java-server's own sort and limit over these positions give the
   * answer. Taken only when every key of the collection is a number of those types (its first and last
   * keys are: H2 orders the types, so every key between is one) and no key is NaN; otherwise null, and
   * the query is answered as before.
   */
  static final class IdOrder {
    static final AtomicLong ORDERED = new AtomicLong();
    private static final List<Class<?>> TYPES = List.of(Integer.class, Long.class, Double.class);

    /**
     * The positions the query's answer is among, or null. Sorted by `_id` with a limit: its first
     * `skip + limit` documents in `_id` order. Otherwise, for a range of strings on `_id`: every
     * document in the range.
     */
    static List<Object> positions(MVMap<Object, Document> data, Document query, Document orderBy, int skip, int limit,
        BiPredicate<Document, Document> matches) {
      int way = 0;
      if (orderBy != null && orderBy.size() == 1 && orderBy.get("_id") instanceof Number w && Math.abs(w.doubleValue()) == 1)
        way = w.doubleValue() > 0 ? 1 : -1;
      boolean first = way != 0 && limit > 0 && skip >= 0;
      Object lower = null;
      Object upper = null;
      if (query.containsKey("_id")) {
        if (!(query.get("_id") instanceof Document range) || range.isEmpty()) return null;
        for (Map.Entry<String, Object> op : range.entrySet()) {
          Object v = op.getValue();
          if (!(isNumber(v) && !Double.isNaN(((Number) v).doubleValue())) && !isAscii(v)) return null;
          switch (op.getKey()) {
            case "$gt", "$gte" -> lower = v;
            case "$lt", "$lte" -> upper = v;
            default -> { return null; }
          }
        }
      }
      boolean strings = lower instanceof String || upper instanceof String;
      if (strings) {
        // Only strings are in a range of strings; both bounds must be strings.
        if ((lower != null && !(lower instanceof String)) || (upper != null && !(upper instanceof String))) return null;
        if (way < 0 && upper == null) return null;
        List<Object> out = walkStrings(data, query, (String) lower, (String) upper, way >= 0,
            first ? (long) skip + limit : Long.MAX_VALUE, matches);
        ORDERED.incrementAndGet();
        return out;
      }
      if (!first) return null;
      Object head = data.firstKey();
      if (head == null || !isNumber(head) || !isNumber(data.lastKey()) || data.containsKey(Double.NaN)) return null;
      boolean up = way > 0;
      long need = (long) skip + limit;
      List<Object> out = new ArrayList<>();
      for (Class<?> type : TYPES) {
        Object from = up ? (lower == null ? lowest(type) : start(type, (Number) lower, true))
            : (upper == null ? highest(type) : start(type, (Number) upper, false));
        if (from == null) continue;
        Number end = (Number) (up ? upper : lower);
        long found = 0;
        Cursor<Object, Document> cursor = data.cursor(from, null, !up);
        while (found < need && cursor.hasNext()) {
          Object key = cursor.next();
          if (key.getClass() != type) break;
          if (end != null && (up ? compare(key, end) > 0 : compare(key, end) < 0)) break;
          if (matches.test(cursor.getValue(), query)) {
            out.add(key);
            found++;
          }
        }
      }
      ORDERED.incrementAndGet();
      return out;
    }

    /**
     * The keys of a range of strings, walked up from `lower` (or the first string) or down from `upper`,
     * matched against the whole query, until `need` match. H2 orders strings by their UTF-16 units and
     * MongoDB by their UTF-8 bytes; the two orders differ only between characters past U+FFFF and those
     * from U+E000, so against bounds of ASCII characters alone a key compares alike in both.
     */
    private static List<Object> walkStrings(MVMap<Object, Document> data, Document query, String lower, String upper,
        boolean up, long need, BiPredicate<Document, Document> matches) {
      List<Object> out = new ArrayList<>();
      Cursor<Object, Document> cursor = data.cursor(up ? (lower == null ? "" : lower) : upper, null, !up);
      long found = 0;
      while (found < need && cursor.hasNext()) {
        Object key = cursor.next();
        if (!(key instanceof String k)) break;
        if (up ? upper != null && k.compareTo(upper) > 0 : lower != null && k.compareTo(lower) < 0) break;
        if (matches.test(cursor.getValue(), query)) {
          out.add(key);
          found++;
        }
      }
      return out;
    }

    private static boolean isAscii(Object v) {
      if (!(v instanceof String s)) return false;
      for (int i = 0; i < s.length(); i++) if (s.charAt(i) >= 0x80) return false;
      return true;
    }

    private static boolean isNumber(Object key) {
      return key instanceof Integer || key instanceof Long || key instanceof Double;
    }

    private static int compare(Object key, Number bound) {
      return ValueComparator.asc().compare(key, bound);
    }

    private static Object lowest(Class<?> type) {
      return type == Integer.class ? (Object) Integer.MIN_VALUE : type == Long.class ? (Object) Long.MIN_VALUE : (Object) Double.NEGATIVE_INFINITY;
    }

    private static Object highest(Class<?> type) {
      return type == Integer.class ? (Object) Integer.MAX_VALUE : type == Long.class ? (Object) Long.MAX_VALUE : (Object) Double.POSITIVE_INFINITY;
    }

    /**
     * Where a walk of `type`'s keys starts for a range's bound: walking up (from a lower bound), a key of
     * the type at or below every key of the type at or above the bound; walking down, at or above every
     * key at or below it. Null when no key of the type can be in the range.
     */
    private static Object start(Class<?> type, Number bound, boolean up) {
      if (type == Double.class) {
        double d = bound instanceof Long l ? (double) l : bound.doubleValue();
        return up ? Math.nextDown(d) : Math.nextUp(d);
      }
      long max = type == Integer.class ? Integer.MAX_VALUE : Long.MAX_VALUE;
      long min = type == Integer.class ? Integer.MIN_VALUE : Long.MIN_VALUE;
      long at;
      if (bound instanceof Double d) {
        if (up ? d > max : d < min) return null;
        at = up ? (d <= min ? min : (long) Math.floor(d)) : (d >= max ? max : (long) Math.ceil(d));
      } else {
        long l = bound.longValue();
        if (up ? l > max : l < min) return null;
        at = up ? Math.max(l, min) : Math.min(l, max);
      }
      return type == Integer.class ? (Object) (int) at : (Object) at;
    }
  }

  /** An H2 collection whose queries are planned by IndexedQueries; a scan meets its documents in its map's key order. */
  static final class IndexedH2Collection extends H2Collection {
    private final Comparator<Object> natural;
    private final MVMap<Object, Document> data;

    IndexedH2Collection(MongoDatabase database, String name, CollectionOptions options, MVMap<Object, Document> data,
        MVMap<String, Object> meta, CursorRegistry cursors) {
      super(database, name, options, data, meta, cursors);
      this.data = data;
      this.natural = (a, b) -> data.getKeyType().compare(Missing.ofNullable(a), Missing.ofNullable(b));
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
        Document fields) {
      return IndexedQueries.query(this, query, this::streamAllDocumentsWithPosition, natural,
          p -> matchDocuments(query, p, orderBy, skip, limit, batchSize, fields),
          () -> {
            List<Object> ordered = IdOrder.positions(data, query, orderBy, skip, limit, this::documentMatchesQuery);
            return ordered == null ? null : matchDocuments(query, ordered, orderBy, skip, limit, batchSize, fields);
          },
          () -> super.queryDocuments(query, orderBy, skip, limit, batchSize, fields));
    }
  }

  /** The test server's collections, with the same query planning as the embedded default's. */
  static final class IndexedMemoryCollection extends MemoryCollection {
    IndexedMemoryCollection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
      super(database, name, options, cursors);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
        Document fields) {
      // Positions are the documents' places in insertion order: the order a scan meets them.
      return IndexedQueries.query(this, query, this::streamAllDocumentsWithPosition, Comparator.naturalOrder(),
          p -> matchDocuments(query, p, orderBy, skip, limit, batchSize, fields), () -> null,
          () -> super.queryDocuments(query, orderBy, skip, limit, batchSize, fields));
    }
  }

  static final class IndexedMemoryDatabase extends MemoryDatabase {
    IndexedMemoryDatabase(String name, CursorRegistry cursors) { super(name, cursors); }

    @Override
    protected Index<Integer> openOrCreateSecondaryIndex(String collection, String name, List<IndexKey> keys, boolean sparse) {
      return new SecondaryIndex<>(name, keys);
    }

    @Override
    protected Index<Integer> openOrCreateUniqueIndex(String collection, String name, List<IndexKey> keys, boolean sparse) {
      return PrefixedUniqueIndex.of(super.openOrCreateUniqueIndex(collection, name, keys, sparse), sparse);
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String name, CollectionOptions options) {
      return new IndexedMemoryCollection(this, name, options, cursorRegistry);
    }
  }

  /** The memory backend (the test server) with IndexedQueries and the `indexUse` command. */
  static final class IndexedMemoryBackend extends MemoryBackend {
    @Override
    public MemoryDatabase openOrCreateDatabase(String name) {
      return new IndexedMemoryDatabase(name, getCursorRegistry());
    }

    @Override
    public Document handleCommand(Channel channel, String db, String command, Document query) {
      Document stats = IndexedQueries.command(command);
      if (stats != null) return stats;
      Document counted = IndexedQueries.count(this, db, command, query);
      return counted != null ? counted : super.handleCommand(channel, db, command, query);
    }
  }

  /** Commands that change data or metadata: the reply waits for the commit. */
  private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findandmodify", "create",
      "createindexes", "dropindexes", "drop", "dropdatabase", "renamecollection", "aggregate");

  /**
   * The key type of every unique index's map (the `_id` index included): the order is H2's own for
   * these keys, the bytes of their Java serialisation compared (a KeyValue is not Comparable), so files
   * written before read the same; only each key's bytes are kept instead of made again. H2 serialised
   * both keys at every comparison of a lookup, about 17 times a key at 100,000 documents, which was
   * three quarters of the server's time in an insert (its unique-index checks, measured with JFR).
   * Pages are written from the same bytes. Bounded: -Dmongo.h2.keyBytesCache keys (default 50,000).
   * -Dmongo.h2.keyBytes=h2 opens the indexes with H2's own key type instead (the same order, no bytes kept).
   */
  /**
   * H2's default key type, safe for a map used by several threads at once. H2's ObjectDataType keeps
   * the type of the last value it met in one field shared by every thread that uses the map, and its
   * comparison of two serialised values (an ObjectId `_id`, a KeyValue) reads that field twice: when
   * another thread switched it meanwhile (a commit writing the map's pages, or another connection's
   * insert, meeting a key of another type), the two reads disagree and the comparison throws "Can not
   * compare" (decision 1100). A collection's documents are keyed by their `_id` as it is (ObjectIds,
   * strings and numbers in one map), so an insert racing a commit failed, and a failure inside the
   * store's own writer closed the store ("This store is closed"). Here each thread has its own
   * ObjectDataType: the same order, the same bytes on disk, no field shared between threads.
   */
  static class ThreadSafeObjectType extends ObjectDataType {
    private static final ThreadLocal<ObjectDataType> OWN = ThreadLocal.withInitial(ObjectDataType::new);

    @Override public int compare(Object a, Object b) { return OWN.get().compare(a, b); }
    @Override public int getMemory(Object obj) { return OWN.get().getMemory(obj); }
    @Override public void write(WriteBuffer buff, Object obj) { OWN.get().write(buff, obj); }
    @Override public Object read(ByteBuffer buff) { return OWN.get().read(buff); }
  }

  static final class IndexKeyType extends ThreadSafeObjectType {
    private static final int MAX = Integer.getInteger("mongo.h2.keyBytesCache", 50_000);
    /** H2's tag of a value stored as its Java serialisation (ObjectDataType.TYPE_SERIALIZED_OBJECT). */
    private static final byte SERIALIZED = 19;
    /** Keys by identity (a KeyValue's equals treats 1 and 1L alike; their bytes differ). */
    private static final class Ref {
      final Object key;
      Ref(Object key) { this.key = key; }
      @Override public int hashCode() { return System.identityHashCode(key); }
      @Override public boolean equals(Object o) { return o instanceof Ref r && r.key == key; }
    }
    /** Emptied whenever it passes MAX (the keys in use come back at their next comparison). */
    private static final Map<Ref, byte[]> BYTES = new ConcurrentHashMap<>(1 << 12);

    private static byte[] bytes(Object key) {
      Ref ref = new Ref(key);
      byte[] b = BYTES.get(ref);
      if (b != null) return b;
      b = serialize(key);
      if (BYTES.size() >= MAX) BYTES.clear();
      BYTES.put(ref, b);
      return b;
    }

    @Override
    public int compare(Object a, Object b) {
      if (a instanceof KeyValue && b instanceof KeyValue) return a == b ? 0 : compareNotNull(bytes(a), bytes(b));
      return super.compare(a, b);
    }

    /** A key's size in a page as H2 reckons a serialised one once it has written a few (twice its bytes). */
    @Override
    public int getMemory(Object obj) {
      return obj instanceof KeyValue ? bytes(obj).length * 2 : super.getMemory(obj);
    }

    /** A key written into a page as H2 writes it (tag, length, serialisation), from its kept bytes. */
    @Override
    public void write(WriteBuffer buff, Object obj) {
      if (!(obj instanceof KeyValue)) {
        super.write(buff, obj);
        return;
      }
      byte[] b = bytes(obj);
      buff.put(SERIALIZED).putVarInt(b.length).put(b);
    }
  }

  /**
   * A collection's documents as BSON (decision 1178). H2's default value type stores each document as
   * its Java serialisation, made with a new ObjectOutputStream for every value each time a page holding
   * it is written (every commit rewrites the pages it changed, with all their documents), and read back
   * with an ObjectInputStream: about 60 KB allocated per document inserted, which kept the server's
   * collector busy half of the time it spent on writes, and a scan of 200,000 documents read from the
   * file took 20 s. Here a document is written as the tag BSON and its bytes in the wire's own encoding
   * (mongo-java-server's BsonEncoder, into a buffer kept per thread) and read with its BsonDecoder.
   * Values written before (tag 19, a Java serialisation) are read as H2 reads them, so a file written by
   * an earlier launcher opens and its pages are rewritten in BSON as they change. A value BSON cannot
   * hold (a type the wire has no encoding for) is written as H2 writes it rather than failing a commit.
   * -Dmongo.h2.values=java writes every value as H2 does, as earlier launchers did (the form the
   * compatibility test writes its file in; values already stored as BSON stay so until rewritten).
   */
  static final class DocumentType extends ThreadSafeObjectType {
    /** Not a tag H2's ObjectDataType writes (its tags end at 119). */
    static final byte BSON = (byte) 0xB5;
    private static final boolean JAVA = "java".equals(System.getProperty("mongo.h2.values"));
    private static final int KEPT_BUFFER = 1 << 20;
    private static final ThreadLocal<ByteBuf> OUT = ThreadLocal.withInitial(() -> Unpooled.buffer(4096));
    /** A document's size in a page as H2 reckons a serialised value (twice its bytes), averaged as H2 does. */
    private volatile int averageSize = 1024;

    @Override
    public int getMemory(Object obj) {
      return obj instanceof Document ? averageSize : super.getMemory(obj);
    }

    @Override
    public void write(WriteBuffer buff, Object obj) {
      if (JAVA || !(obj instanceof Document document)) {
        super.write(buff, obj);
        return;
      }
      ByteBuf out = OUT.get();
      out.clear();
      try {
        BsonEncoder.encodeDocument(document, out);
      } catch (RuntimeException unencodable) {
        super.write(buff, obj);
        return;
      } finally {
        if (out.capacity() > KEPT_BUFFER) OUT.remove();
      }
      int length = out.readableBytes();
      averageSize = (int) ((length * 2L + 15L * averageSize) / 16);
      buff.put(BSON).put(out.array(), out.arrayOffset() + out.readerIndex(), length);
    }

    @Override
    public Object read(ByteBuffer buff) {
      if (buff.get(buff.position()) != BSON) return super.read(buff);
      ByteBuf in = Unpooled.wrappedBuffer(buff.slice(buff.position() + 1, buff.remaining() - 1));
      Document document = BsonDecoder.decodeBson(in);
      buff.position(buff.position() + 1 + in.readerIndex());
      return document;
    }
  }

  /**
   * Values H2 would store as Java serialisations, stored compactly where their order does not depend on
   * the bytes (decision 1178): an ObjectId as the tag OBJECT_ID and its 12 bytes. The type of a
   * collection's `_id` keys (compared as objects: an ObjectId is Comparable, so H2 orders two of them by
   * compareTo, not by their bytes) and of the `_id`s a unique index maps its keys to. Keys and values
   * written before (a Java serialisation) are read as H2 reads them.
   */
  static class CompactIdType extends ThreadSafeObjectType {
    /** Not a tag H2's ObjectDataType writes (its tags end at 119), nor DocumentType's. */
    static final byte OBJECT_ID = (byte) 0xB6;
    private static final boolean JAVA = "java".equals(System.getProperty("mongo.h2.values"));

    @Override
    public int getMemory(Object obj) {
      return obj instanceof ObjectId ? 48 : super.getMemory(obj);
    }

    @Override
    public void write(WriteBuffer buff, Object obj) {
      if (JAVA || !(obj instanceof ObjectId id)) super.write(buff, obj);
      else buff.put(OBJECT_ID).put(id.toByteArray());
    }

    @Override
    public Object read(ByteBuffer buff) {
      if (buff.get(buff.position()) != OBJECT_ID) return super.read(buff);
      byte[] id = new byte[12];
      buff.get();
      buff.get(id);
      return new ObjectId(id);
    }
  }

  /** An H2 database whose unique indexes open with IndexKeyType (the map is open before H2Database asks for it). */
  static final class KeyedH2Database extends H2Database {
    private static volatile MVStore store;

    KeyedH2Database(String name, MVStore mvStore, CursorRegistry cursors) { super(name, mvStore, cursors); }

    private static final boolean KEPT = !"h2".equals(System.getProperty("mongo.h2.keyBytes"));

    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collection, String index, List<IndexKey> keys, boolean sparse) {
      // The name H2Database gives an index's map; MVStore hands an open map to every later openMap(name).
      store.openMap(getFullCollectionNamespace(collection) + "._index_" + index,
          new MVMap.Builder<KeyValue, Object>().keyType(KEPT ? new IndexKeyType() : new ThreadSafeObjectType())
              .valueType(new CompactIdType()));
      Index<Object> opened = super.openOrCreateUniqueIndex(collection, index, keys, sparse);
      if (!(keyTypeOf(opened, "mvMap") instanceof ThreadSafeObjectType))
        throw new IllegalStateException("mongo-java-server opened the index " + index + " of " + collection
            + " as another map than the launcher's (its map names changed?)");
      return PrefixedUniqueIndex.of(opened, sparse);
    }

    @Override
    protected Index<Object> openOrCreateSecondaryIndex(String collection, String name, List<IndexKey> keys, boolean sparse) {
      return new SecondaryIndex<>(name, keys);
    }

    /** A collection's documents, keyed by `_id`, in a map whose key type is safe between threads (decision 1100). */
    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collection, CollectionOptions options) {
      String ns = getFullCollectionNamespace(collection);
      MVMap<Object, Document> data = store.openMap("databases." + ns,
          new MVMap.Builder<Object, Document>().keyType(new CompactIdType()).valueType(new DocumentType()));
      // H2Database.openOrCreateCollection's maps (its DATABASES_PREFIX and META_PREFIX), in the launcher's collection.
      MVMap<String, Object> meta = store.openMap("meta." + ns);
      MongoCollection<Object> opened = new IndexedH2Collection(this, collection, options, data, meta, cursorRegistry);
      if (!(keyTypeOf(opened, "dataMap") instanceof ThreadSafeObjectType))
        throw new IllegalStateException("mongo-java-server opened the collection " + collection
            + " as another map than the launcher's (its map names changed?)");
      return opened;
    }

    /** The key type of the map behind a unique index or a collection (each keeps it in a private field). */
    private static Object keyTypeOf(Object owner, String field) {
      try {
        Class<?> declaring = owner.getClass();
        while (declaring != null && java.util.Arrays.stream(declaring.getDeclaredFields()).noneMatch(f -> f.getName().equals(field)))
          declaring = declaring.getSuperclass();
        if (declaring == null) throw new NoSuchFieldException(field);
        java.lang.reflect.Field map = declaring.getDeclaredField(field);
        map.setAccessible(true);
        return ((MVMap<?, ?>) map.get(owner)).getKeyType();
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot read the map " + field + " of " + owner, e);
      }
    }
  }

  /** H2 backend that commits the store before answering a write (OP_MSG and legacy queries both end in handleCommand). */
  static final class DurableH2Backend extends H2Backend {
    DurableH2Backend(MVStore store) {
      super(setStore(store));
    }

    private static MVStore setStore(MVStore store) {
      KeyedH2Database.store = store;
      return store;
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String name) {
      return new KeyedH2Database(name, getMvStore(), getCursorRegistry());
    }

    private void commitIfWrite(String command) {
      if (command != null && WRITES.contains(command.toLowerCase())) {
        getMvStore().commit();
        LAST_WRITE_NANOS = System.nanoTime();
      }
    }

    /**
     * Every command reads the store's maps as of the version current when it began, for as long as it
     * runs: a scan of a large collection takes seconds while other connections write and commit, and the
     * store's background thread rewrites the pages of sparse chunks elsewhere and frees those chunks. A
     * page the scan still had to read was then in a chunk no longer there (`MVStoreException: Chunk N
     * not found`, seven failed finds in one B10 run with 20 s rounds, 2026-12-02). Registering the
     * command's use of its version (as H2's own transactions do for their snapshots) keeps the chunks of
     * that version until the command ends.
     */
    @Override
    public Document handleCommand(Channel channel, String db, String command, Document query) {
      if ("compactStore".equalsIgnoreCase(command)) return compactStore(getMvStore(), query);
      Document stats = IndexedQueries.command(command);
      if (stats != null) return stats;
      MVStore.TxCounter reading = getMvStore().registerVersionUsage();
      try {
        Document counted = IndexedQueries.count(this, db, command, query);
        if (counted != null) return counted;
        try {
          return super.handleCommand(channel, db, command, query);
        } finally {
          commitIfWrite(command);
        }
      } finally {
        getMvStore().deregisterVersionUsage(reading);
      }
    }
  }

  /**
   * The `compactStore` command (`{compactStore: 1, targetFillRate: 90, maxMs: 30000}`, both optional):
   * rewrites the live pages of the store's sparse chunks now, 16 MB at a time, until the chunks' fill
   * rate reaches the target or `maxMs` has passed, committing after each step. H2's background thread does
   * the same work a little each second, and mostly while writes come in: after a collection or a database
   * is dropped, the rewrite of what stayed in the chunks the dropped pages shared would otherwise fall on
   * the writes that follow (decision 1181). As H2's own rewrite, it leaves chunks younger than the store's
   * retention time (45 s unless `-Dmongo.h2.retentionMs` says otherwise) alone: the reply says it and how
   * long ago the last write was, so a caller wanting every chunk rewritten waits that long first. Operators
   * run it after removing a tenant; the benchmarks before each measured window. The reply also gives the
   * chunks' fill rate before and after, and the steps taken.
   */
  /** When the last write command committed (`compactStore` says how long ago). */
  static volatile long LAST_WRITE_NANOS = System.nanoTime();

  static Document compactStore(MVStore store, Document query) {
    int target = (int) Math.max(1, Math.min(100, number(query.get("targetFillRate"), 90)));
    long maxMs = (long) Math.max(0, Math.min(600_000, number(query.get("maxMs"), 30_000)));
    long until = System.nanoTime() + maxMs * 1_000_000L;
    int before = store.getFileStore().getChunksFillRate();
    int steps = 0;
    store.commit();
    while (System.nanoTime() < until && store.compact(target, 16 * 1024 * 1024)) {
      store.commit();
      steps++;
    }
    Document reply = new Document("chunksFillRateBefore", before)
        .append("chunksFillRate", store.getFileStore().getChunksFillRate())
        .append("fillRate", store.getFillRate())
        .append("steps", steps)
        .append("targetFillRate", target)
        .append("retentionMs", store.getRetentionTime())
        .append("msSinceLastWrite", (System.nanoTime() - LAST_WRITE_NANOS) / 1_000_000L);
    Utils.markOkay(reply);
    return reply;
  }

  private static double number(Object value, double otherwise) {
    return value instanceof Number n ? n.doubleValue() : otherwise;
  }

  /** The database handler of one connection; its thread ends with the connection. */
  static final class ConnectionHandler extends MongoDatabaseHandler {
    ConnectionHandler(MongoBackend backend, ChannelGroup clients) { super(backend, clients); }

    /** The last event of a closed connection (after channelInactive, which closes its cursors). */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
      try {
        super.handlerRemoved(ctx);
      } finally {
        ctx.executor().shutdownGracefully(0, 1, TimeUnit.SECONDS);
      }
    }
  }

  /** mongo-java-server's pipeline (MongoServer.bind), with each connection's commands on a thread of its own. */
  static final class Server {
    private final EventLoopGroup boss = new NioEventLoopGroup(1, new DefaultThreadFactory("mongo-server-boss"));
    private final EventLoopGroup io = new NioEventLoopGroup(0, new DefaultThreadFactory("mongo-server-io"));
    private final ThreadFactory connectionThreads = new DefaultThreadFactory("mongo-server-connection");
    private final MongoBackend backend;
    private final ChannelGroup clients;
    private Channel channel;

    Server(MongoBackend backend) {
      this.backend = backend;
      this.clients = new DefaultChannelGroup("mongodb-channels", io.next());
    }

    void bind(String host, int port) {
      channel = new ServerBootstrap()
          .group(boss, io)
          .channel(NioServerSocketChannel.class)
          .option(ChannelOption.SO_BACKLOG, 100)
          .localAddress(new InetSocketAddress(host, port))
          .childOption(ChannelOption.TCP_NODELAY, Boolean.TRUE)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            public void initChannel(SocketChannel ch) {
              EventExecutor commands = new DefaultEventExecutor(connectionThreads);
              ch.pipeline().addLast(new MongoWireReplyEncoder());
              ch.pipeline().addLast(new MongoWireMessageEncoder());
              ch.pipeline().addLast(new MongoWireProtocolHandler());
              ch.pipeline().addLast(commands, new ConnectionHandler(backend, clients));
              ch.pipeline().addLast(new MongoExceptionHandler());
            }
          })
          .bind()
          .syncUninterruptibly()
          .channel();
    }

    void shutdown() {
      if (channel != null) channel.close().syncUninterruptibly();
      clients.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
      boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
      io.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
      backend.close();
    }
  }

  /** The H2 page cache in MB: -Dmongo.h2.cacheMb, else a third of the heap (at least H2's default, 16). */
  static int cacheMb() {
    String set = System.getProperty("mongo.h2.cacheMb");
    if (set != null && !set.isBlank()) return Integer.parseInt(set.trim());
    return (int) Math.max(16, Runtime.getRuntime().maxMemory() / 3 / (1024 * 1024));
  }

  public static void main(String[] args) throws Exception {
    // Older callers passed HOST PORT FILE (the H2 backend): still accepted.
    if (args.length == 3 && !args[0].equals("memory") && !args[0].equals("h2")) args = new String[] { "h2", args[0], args[1], args[2] };
    boolean memory = args.length == 3 && args[0].equals("memory");
    boolean h2 = args.length == 4 && args[0].equals("h2");
    if (!memory && !h2) {
      System.err.println("usage: MongoJavaServerLauncher memory HOST PORT | h2 HOST PORT FILE");
      System.exit(64);
    }
    MongoBackend backend;
    String detail = "";
    if (memory) {
      backend = new IndexedMemoryBackend();
    } else {
      int cache = cacheMb();
      MVStore store = new MVStore.Builder().fileName(args[3]).cacheSize(cache).open();
      // How long a chunk is kept before its space may be reused (H2's default, 45 s, unless set: tests
      // shorten it; below the time the file system takes to write its buffers a crash of the machine
      // could find a chunk overwritten, H2's documentation says).
      String retention = System.getProperty("mongo.h2.retentionMs");
      if (retention != null && !retention.isBlank()) store.setRetentionTime(Integer.parseInt(retention.trim()));
      backend = new DurableH2Backend(store);
      detail = ", page cache " + cache + " MB";
    }
    backend.version(V44);
    Server server = new Server(backend);
    server.bind(args[1], Integer.parseInt(args[2]));
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown));
    System.out.println("mongo-java-server (" + args[0] + detail + ") listening on " + args[1] + ":" + args[2]);
    Thread.currentThread().join();
  }
}
