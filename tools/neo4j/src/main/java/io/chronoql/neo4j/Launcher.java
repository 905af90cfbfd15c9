package io.chronoql.neo4j;

import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.event.DatabaseEventContext;
import org.neo4j.graphdb.event.DatabaseEventListenerAdapter;
import org.neo4j.kernel.internal.Version;

/**
 * Runs an embedded Neo4j Community DBMS whose only door is a Bolt connector on 127.0.0.1,
 * so that ChronoQL talks to it with neo4j-driver exactly as it would to a real server.
 *
 * <p>Protocol with the Node side (src/graph/managedNeo4j.ts):
 * <ul>
 *   <li>stdout carries exactly one line, {@code READY bolt://127.0.0.1:PORT}, once Bolt accepts
 *       connections; everything else Neo4j has to say goes to its own logs under the data dir.</li>
 *   <li>{@code <data-dir>/launcher.json} exists only while this process serves the store, so a
 *       second ChronoQL process can find and reuse it instead of fighting over the store lock.</li>
 *   <li>Startup failures are one line on stderr starting with {@code chronoql-neo4j:} and a
 *       distinct exit code, because the Node side shows the stderr tail to the user.</li>
 * </ul>
 */
public final class Launcher {

    static final int EXIT_USAGE = 2;
    static final int EXIT_PORT_IN_USE = 3;
    static final int EXIT_STORE_LOCKED = 4;
    static final int EXIT_START_FAILED = 5;
    static final int EXIT_SHUTDOWN_TIMED_OUT = 6;
    static final int EXIT_DATABASE_PANIC = 7;

    private static final String STATE_FILE = "launcher.json";
    private static final Duration DATABASE_AVAILABLE_TIMEOUT = Duration.ofMinutes(5);
    /**
     * Neo4j's shutdown retries a failed page flush forever (a full disk), so a JVM whose parent
     * is gone would never exit and would keep the store locked. Past this, it halts: recovery
     * replays the transaction log at the next start. The Node side waits as long before SIGKILL.
     */
    static final Duration SHUTDOWN_DEADLINE = Duration.ofSeconds(30);
    /** Below this much free space a checkpoint at shutdown is not attempted (see diskNearlyFull). */
    static final long SHUTDOWN_MIN_FREE_BYTES = 64L * 1024L * 1024L;

    private Launcher() {}

    /** Thrown for problems that deserve a one-line explanation rather than a stack trace. */
    static final class LaunchException extends Exception {
        final int exitCode;

        LaunchException(int exitCode, String message) {
            super(message);
            this.exitCode = exitCode;
        }
    }

    /** The password comes from the environment (CHRONOQL_NEO4J_PASSWORD), never the command line, which others can read. */
    record Options(Path dataDir, int boltPort, Long parentPid, long pageCacheMb, Optional<String> password) {}

    public static void main(String[] args) {
        // Neo4j and its libraries occasionally print to stdout; the Node side reads stdout only
        // for the READY line, so everything else is diverted to stderr (which it logs to a file).
        PrintStream protocolOut = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        try {
            Options options = parseArgs(args);
            run(options, protocolOut);
        } catch (LaunchException e) {
            System.err.println("chronoql-neo4j: " + e.getMessage());
            System.err.flush();
            // halt, not exit: a half-started DBMS may hold non-daemon threads and hooks we do not want.
            Runtime.getRuntime().halt(e.exitCode);
        } catch (Throwable t) {
            System.err.println("chronoql-neo4j: unexpected failure: " + describe(t));
            t.printStackTrace(System.err);
            System.err.flush();
            Runtime.getRuntime().halt(EXIT_START_FAILED);
        }
    }

    static Options parseArgs(String[] args) throws LaunchException {
        Path dataDir = null;
        Integer boltPort = null;
        Long parentPid = null;
        long pageCacheMb = 512;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) {
                throw new LaunchException(EXIT_USAGE, "missing value for " + flag + "\n" + usage());
            }
            String value = args[++i];
            switch (flag) {
                case "--data-dir" -> dataDir = Path.of(value).toAbsolutePath().normalize();
                case "--bolt-port" -> boltPort = parseNumber(flag, value, 1, 65535).intValue();
                case "--parent-pid" -> parentPid = parseNumber(flag, value, 1, Long.MAX_VALUE);
                case "--pagecache-mb" -> pageCacheMb = parseNumber(flag, value, 8, 1L << 20);
                default -> throw new LaunchException(EXIT_USAGE, "unknown option " + flag + "\n" + usage());
            }
        }
        if (dataDir == null || boltPort == null) {
            throw new LaunchException(EXIT_USAGE, "--data-dir and --bolt-port are required\n" + usage());
        }
        return new Options(dataDir, boltPort, parentPid, pageCacheMb,
                Optional.ofNullable(System.getenv("CHRONOQL_NEO4J_PASSWORD")).filter(password -> !password.isEmpty()));
    }

    private static Long parseNumber(String flag, String value, long min, long max) throws LaunchException {
        try {
            long n = Long.parseLong(value.trim());
            if (n < min || n > max) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new LaunchException(EXIT_USAGE, flag + " expects a number in [" + min + ", " + max + "], got '" + value + "'");
        }
    }

    private static String usage() {
        return "usage: Launcher --data-dir DIR --bolt-port PORT [--parent-pid PID] [--pagecache-mb MB]";
    }

    static void run(Options options, PrintStream protocolOut) throws Exception {
        Files.createDirectories(options.dataDir());
        Path stateFile = options.dataDir().resolve(STATE_FILE);

        // Checked before Neo4j starts so the user gets a plain sentence instead of a buried
        // PortBindException, and so we do not create or touch store files for nothing.
        ensurePortFree(options.boltPort());
        ensureStoreUnlocked(options.dataDir());

        ParentWatch parentWatch = options.parentPid() == null ? null : ParentWatch.of(options.parentPid());
        if (parentWatch != null && !parentWatch.isAlive()) {
            throw new LaunchException(EXIT_START_FAILED, "parent process " + options.parentPid() + " is already gone; not starting");
        }

        DatabaseManagementService dbms = startDbms(options);
        AtomicBoolean stopped = new AtomicBoolean(false);
        CountDownLatch stoppedLatch = new CountDownLatch(1);
        Runnable stop = () -> {
            if (!stopped.compareAndSet(false, true)) {
                return;
            }
            haltAfter(SHUTDOWN_DEADLINE);
            try {
                deleteStateFileIfOurs(stateFile);
                if (diskNearlyFull(options.dataDir())) {
                    // A clean shutdown would flush pages the disk cannot take, hang, and be cut off half
                    // done; stopping as a crash leaves what recovery is made for: the transaction log.
                    System.err.println("chronoql-neo4j: the disk under " + options.dataDir()
                            + " is full; stopping without a checkpoint, the next start recovers from the transaction log");
                    System.err.flush();
                    Runtime.getRuntime().halt(EXIT_SHUTDOWN_TIMED_OUT);
                }
                dbms.shutdown();
            } catch (Throwable t) {
                System.err.println("chronoql-neo4j: error during shutdown: " + describe(t));
            } finally {
                stoppedLatch.countDown();
            }
        };
        // SIGTERM, SIGINT and SIGHUP all run shutdown hooks, so a single hook covers them; a clean
        // shutdown flushes the store and avoids recovery on the next start.
        Runtime.getRuntime().addShutdownHook(new Thread(stop, "chronoql-neo4j-shutdown"));
        exitOnPanic(dbms);

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(DATABASE_AVAILABLE_TIMEOUT.toMillis())) {
            throw new LaunchException(EXIT_START_FAILED, "database '" + db.databaseName() + "' did not become available within "
                    + DATABASE_AVAILABLE_TIMEOUT.toSeconds() + " s; see " + options.dataDir().resolve("logs/debug.log"));
        }
        if (options.password().isPresent()) {
            setPassword(dbms, options.password().get());
        }
        String version = Version.getNeo4jVersion();
        if (!boltAnswers(options.boltPort())) {
            throw new LaunchException(EXIT_START_FAILED, "Neo4j started but nothing listens on 127.0.0.1:" + options.boltPort()
                    + " - is neo4j-bolt on the classpath?");
        }

        writeStateFile(stateFile, options.boltPort(), version);
        protocolOut.println("READY bolt://127.0.0.1:" + options.boltPort());
        protocolOut.flush();
        System.err.println("chronoql-neo4j: Neo4j " + version + " serving " + options.dataDir() + " on bolt://127.0.0.1:" + options.boltPort()
                + " (pid " + ProcessHandle.current().pid() + ")");

        if (parentWatch != null) {
            Thread watcher = new Thread(() -> watchParent(parentWatch), "chronoql-neo4j-parent-watch");
            watcher.setDaemon(true);
            watcher.start();
        }
        stoppedLatch.await();
    }

    /** Sets the neo4j user's password on every start, so changing the setting takes effect at the next one. */
    private static void setPassword(DatabaseManagementService dbms, String password) throws LaunchException {
        GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        try {
            system.executeTransactionally("ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED", java.util.Map.of("password", password));
        } catch (RuntimeException e) {
            if (!String.valueOf(describe(e)).contains("cannot be the same")) {
                throw new LaunchException(EXIT_START_FAILED, "cannot set the password of the neo4j user: " + describe(e));
            }
        }
    }

    private static DatabaseManagementService startDbms(Options options) throws LaunchException {
        try {
            return new DatabaseManagementServiceBuilder(options.dataDir())
                    .setConfig(BoltConnector.enabled, true)
                    .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", options.boltPort()))
                    .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", options.boltPort()))
                    .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                    .setConfig(HttpConnector.enabled, false)
                    .setConfig(HttpsConnector.enabled, false)
                    // Reachable from this machine only; a password (CHRONOQL_NEO4J_PASSWORD) also keeps
                    // out other local users.
                    .setConfig(GraphDatabaseSettings.auth_enabled, options.password().isPresent())
                    .setConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress("127.0.0.1"))
                    // Sized for a laptop or a 2-core CI box rather than a dedicated server.
                    .setConfig(GraphDatabaseSettings.pagecache_memory, options.pageCacheMb() * 1024L * 1024L)
                    .setConfig(GraphDatabaseSettings.keep_logical_logs, "2 files")
                    .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, 64L * 1024L * 1024L)
                    .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                    .setConfig(GraphDatabaseSettings.udc_enabled, false)
                    // Netty waits a 5 s quiet period per Bolt event-loop group (two of them) before
                    // it closes; that made every stop take ~10 s for no benefit on a local store.
                    .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                    .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(5))
                    .build();
        } catch (Throwable t) {
            throw classifyStartupFailure(t, options);
        }
    }

    private static LaunchException classifyStartupFailure(Throwable failure, Options options) {
        for (Throwable c = failure; c != null; c = c.getCause()) {
            String type = c.getClass().getName();
            if (c instanceof BindException || type.endsWith("PortBindException")) {
                return new LaunchException(EXIT_PORT_IN_USE, "Bolt port " + options.boltPort() + " on 127.0.0.1 is already in use");
            }
            if (type.endsWith("FileLockException")) {
                return storeLocked(options.dataDir());
            }
        }
        return new LaunchException(EXIT_START_FAILED, "Neo4j failed to start: " + describe(rootCause(failure))
                + " (details in " + options.dataDir().resolve("logs/debug.log") + ")");
    }

    private static void ensurePortFree(int port) throws LaunchException {
        try (ServerSocket probe = new ServerSocket()) {
            // Netty binds with SO_REUSEADDR, so connections lingering in TIME_WAIT from a previous
            // run must not count as "in use" here either, or every quick restart would fail.
            probe.setReuseAddress(true);
            probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } catch (IOException e) {
            throw new LaunchException(EXIT_PORT_IN_USE, "Bolt port " + port + " on 127.0.0.1 is already in use");
        }
    }

    /**
     * Neo4j only discovers a foreign lock after most of its startup work (seconds); probing the
     * same OS file lock it uses turns that into an instant, clear failure.
     */
    private static void ensureStoreUnlocked(Path dataDir) throws LaunchException {
        Path lockFile = dataDir.resolve("data").resolve("databases").resolve("store_lock");
        if (!Files.exists(lockFile)) {
            return;
        }
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                throw storeLocked(dataDir);
            }
            lock.release();
        } catch (OverlappingFileLockException e) {
            throw storeLocked(dataDir);
        } catch (IOException e) {
            // Unreadable lock file: let Neo4j make the final call and report it.
        }
    }

    private static LaunchException storeLocked(Path dataDir) {
        return new LaunchException(EXIT_STORE_LOCKED, "the store in " + dataDir
                + " is locked by another Neo4j process; stop it or use another data dir");
    }

    private static boolean boltAnswers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Written via rename so a reader never sees a half-written file. */
    private static void writeStateFile(Path stateFile, int boltPort, String version) throws IOException {
        long pid = ProcessHandle.current().pid();
        String json = "{\"pid\":" + pid
                + ",\"boltPort\":" + boltPort
                + ",\"startedAt\":\"" + Instant.now() + "\""
                + ",\"neo4jVersion\":\"" + version.replace("\\", "\\\\").replace("\"", "\\\"") + "\""
                + "}\n";
        Path tmp = stateFile.resolveSibling(STATE_FILE + ".tmp-" + pid);
        Files.writeString(tmp, json, StandardCharsets.UTF_8);
        try {
            Files.move(tmp, stateFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, stateFile, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Another launcher may have taken over the directory after a crash of ours; leave its file alone. */
    private static void deleteStateFileIfOurs(Path stateFile) {
        try {
            if (!Files.exists(stateFile)) {
                return;
            }
            String content = Files.readString(stateFile, StandardCharsets.UTF_8);
            if (content.contains("\"pid\":" + ProcessHandle.current().pid() + ",")) {
                Files.deleteIfExists(stateFile);
            }
        } catch (IOException e) {
            System.err.println("chronoql-neo4j: could not remove " + stateFile + ": " + e.getMessage());
        }
    }

    /**
     * Identifies the parent by pid and start time, since a pid alone can be recycled by an
     * unrelated process after the parent dies.
     */
    record ParentWatch(long pid, Optional<Instant> startedAt) {
        static ParentWatch of(long pid) {
            Optional<Instant> started = ProcessHandle.of(pid).flatMap(h -> h.info().startInstant());
            return new ParentWatch(pid, started);
        }

        boolean isAlive() {
            Optional<ProcessHandle> handle = ProcessHandle.of(pid);
            if (handle.isEmpty() || !handle.get().isAlive()) {
                return false;
            }
            if (startedAt.isEmpty()) {
                return true;
            }
            Optional<Instant> now = handle.get().info().startInstant();
            return now.isEmpty() || now.get().equals(startedAt.get());
        }
    }

    /**
     * A database that panicked (a transaction log append failed on a full disk) refuses every
     * write until it is restarted, while the JVM looks healthy; exiting lets the Node side restart
     * it, and the restart recovers from the transaction log once there is room.
     */
    private static void exitOnPanic(DatabaseManagementService dbms) {
        dbms.registerDatabaseEventListener(new DatabaseEventListenerAdapter() {
            @Override
            public void databasePanic(DatabaseEventContext event) {
                System.err.println("chronoql-neo4j: database '" + event.getDatabaseName()
                        + "' hit a critical error (see logs/debug.log) and refuses writes until restarted; exiting to be restarted");
                System.err.flush();
                // Not on Neo4j's thread: exit runs the shutdown hook, which waits for Neo4j.
                Thread exiter = new Thread(() -> System.exit(EXIT_DATABASE_PANIC), "chronoql-neo4j-panic-exit");
                exiter.setDaemon(true);
                exiter.start();
            }
        });
    }

    private static boolean diskNearlyFull(Path dataDir) {
        try {
            return Files.getFileStore(dataDir).getUsableSpace() < SHUTDOWN_MIN_FREE_BYTES;
        } catch (IOException e) {
            return false;
        }
    }

    private static void haltAfter(Duration deadline) {
        Thread halter = new Thread(() -> {
            try {
                Thread.sleep(deadline.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("chronoql-neo4j: shutdown did not finish within " + deadline.toSeconds()
                    + " s (a full disk?); halting, the next start recovers from the transaction log");
            System.err.flush();
            Runtime.getRuntime().halt(EXIT_SHUTDOWN_TIMED_OUT);
        }, "chronoql-neo4j-shutdown-deadline");
        halter.setDaemon(true);
        halter.start();
    }

    private static void watchParent(ParentWatch parent) {
        while (true) {
            try {
                TimeUnit.SECONDS.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
            if (!parent.isAlive()) {
                System.err.println("chronoql-neo4j: parent process " + parent.pid() + " is gone; shutting down");
                // exit (not halt) so the shutdown hook closes the store cleanly.
                System.exit(0);
            }
        }
    }

    private static Throwable rootCause(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c;
    }

    private static String describe(Throwable t) {
        String message = t.getMessage();
        String text = t.getClass().getSimpleName() + (message == null ? "" : ": " + message);
        return text.replace('\n', ' ');
    }
}
