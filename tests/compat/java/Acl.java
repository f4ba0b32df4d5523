import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * The ACL signing hook of the helper programs, for clusters that check signatures (the compat
 * suite's secured clusters, matrix_secure.py): the system property {@code compat.acl} names a
 * properties file with {@code accessKey} and {@code secretKey} (a file, so the secret is on no
 * command line). Without the property: no hook, requests go unsigned as before.
 *
 * {@code AclClientRPCHook} and {@code SessionCredentials} have the same package in the 4.x acl
 * jar and the 5.x client jar, so this compiles against both.
 */
final class Acl {
    private Acl() {
    }

    static RPCHook hook() {
        String file = System.getProperty("compat.acl");
        if (file == null || file.isEmpty()) {
            return null;
        }
        Properties p = new Properties();
        try (InputStream in = new FileInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + file + ": " + e.getMessage(), e);
        }
        return new AclClientRPCHook(new SessionCredentials(p.getProperty("accessKey"), p.getProperty("secretKey")));
    }
}
