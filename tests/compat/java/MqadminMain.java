import org.apache.rocketmq.tools.command.MQAdminStartup;

/**
 * The real mqadmin, minus the idle seconds after it is done: runs MQAdminStartup.main unchanged
 * (same arguments, output, System.exit calls and uncaught exceptions) and ends the JVM as soon
 * as main returns. A plain mqadmin JVM lingers ~3 s after its last output, until the non-daemon
 * netty threads of its (already shut down) client pass their graceful-shutdown quiet period;
 * mqadmin's exit status is 0 in that case anyway.
 *
 * Usage: java -cp HELPERS:LIB/* MqadminMain SUBCOMMAND ARGS...   (as MQAdminStartup)
 */
public class MqadminMain {
    public static void main(String[] args) {
        MQAdminStartup.main(args);
        System.out.flush();
        System.err.flush();
        System.exit(0);
    }
}
