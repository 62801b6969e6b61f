import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.util.List;
import java.util.Set;
import org.h2.mvstore.MVStore;

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
 * H2: the MVStore commits by itself only once a second (autoCommitDelay), so a kill -9 lost the
 * writes of the last second although the client had been told they were done. This launcher owns the
 * store's settings: a write command is answered only after the store committed it (the commit writes
 * the chunk to the file, so a killed process loses nothing it acknowledged; an fsync per write is not
 * made, so a power cut may still lose the operating system's unwritten pages). Concurrent writers share
 * commits: one commit stores every change made before it. The background thread stays on (it commits
 * nothing left, and compacts the file).
 */
public class MongoJavaServerLauncher {
  private static final MongoVersion V44 = new MongoVersion() {
    public List<Integer> getVersionArray() { return List.of(4, 4, 0); }
    public int getWireVersion() { return 9; }
  };

  /** Commands that change data or metadata: the reply waits for the commit. */
  private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findandmodify", "create",
      "createindexes", "dropindexes", "drop", "dropdatabase", "renamecollection", "aggregate");

  /** H2 backend that commits the store before answering a write (OP_MSG and legacy queries both end in handleCommand). */
  static final class DurableH2Backend extends H2Backend {
    DurableH2Backend(MVStore store) { super(store); }

    private void commitIfWrite(String command) {
      if (command != null && WRITES.contains(command.toLowerCase())) getMvStore().commit();
    }

    @Override
    public Document handleCommand(Channel channel, String db, String command, Document query) {
      try {
        return super.handleCommand(channel, db, command, query);
      } finally {
        commitIfWrite(command);
      }
    }
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
    if (memory) {
      backend = new MemoryBackend();
    } else {
      MVStore store = new MVStore.Builder().fileName(args[3]).open();
      backend = new DurableH2Backend(store);
    }
    backend.version(V44);
    MongoServer server = new MongoServer(backend);
    server.bind(args[1], Integer.parseInt(args[2]));
    MongoBackend b = backend;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdown();
      b.close();
    }));
    System.out.println("mongo-java-server (" + args[0] + ") listening on " + args[1] + ":" + args[2]);
    Thread.currentThread().join();
  }
}
