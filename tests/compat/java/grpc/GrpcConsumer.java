import java.io.File;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.java.message.MessageViewImpl;

/**
 * gRPC consumer (rocketmq-client-java 5.x, through a rocketmq-proxy) for the mqctl compat
 * tests: the broker serves it in POP mode (each message popped with an invisible time, then
 * acknowledged on its own).
 *
 * Usage: java GrpcConsumer simple|push ENDPOINT TOPIC GROUP TAGEXPR MAX IDLE_SECONDS [OPTION...]
 *   simple   SimpleConsumer: receive(batch, invisible) in a loop, ack each message itself
 *   push     PushConsumer: a listener that returns SUCCESS (the client acks) or FAILURE
 *   TAGEXPR  tag filter ("*", "TagA", "TagA||TagB")
 *   MAX      stop once MAX messages were acknowledged (0: no limit)
 *   IDLE     stop when nothing arrived for IDLE seconds (at least 20 s before the first message)
 * Options (key=value):
 *   noack=KEYS        the message with these keys is never acknowledged: simple leaves it
 *                     invisible until its invisible time ends, push returns FAILURE; it comes
 *                     back again and again (the STUCK case)
 *   invisible=SECONDS simple: invisible time of each receive (default 20; the proxy's minimum is 10)
 *   batch=N           simple: messages per receive (default 16); push: the client's cache size
 *   stopfile=PATH     stop as soon as PATH exists
 *   rounds=K          stop once the noack message was received K times
 *
 * Output, one line per event:
 *   RECV brokerName queueId queueOffset topicType tag deliveryAttempt msgId keys
 *   ACK brokerName queueId queueOffset topicType msgId     (simple: after ack() returned)
 *   NOACK brokerName queueId queueOffset topicType deliveryAttempt msgId
 * where is from the receipt handle (see where()); msgId is the producer's message id, the same
 * on every delivery of one message (a retry too).
 *   DONE received acked
 */
public class GrpcConsumer {
    private static final Object PRINT = new Object();
    private static final AtomicInteger RECEIVED = new AtomicInteger();
    private static final AtomicInteger ACKED = new AtomicInteger();
    private static final AtomicInteger NOACKED = new AtomicInteger();
    private static final AtomicLong LAST = new AtomicLong(System.currentTimeMillis());

    public static void main(String[] args) throws Exception {
        if (args.length < 7) {
            System.err.println("usage: GrpcConsumer simple|push ENDPOINT TOPIC GROUP TAGEXPR MAX IDLE_SECONDS [key=value...]");
            System.exit(2);
        }
        Map<String, String> opts = new HashMap<>();
        for (int i = 7; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            opts.put(kv[0], kv.length > 1 ? kv[1] : "");
        }
        String mode = args[0];
        int max = Integer.parseInt(args[5]);
        long idleMs = Long.parseLong(args[6]) * 1000L;
        String noack = opts.get("noack");
        int rounds = Integer.parseInt(opts.getOrDefault("rounds", "0"));
        File stopFile = opts.containsKey("stopfile") ? new File(opts.get("stopfile")) : null;
        int batch = Integer.parseInt(opts.getOrDefault("batch", "16"));
        Duration invisible = Duration.ofSeconds(Long.parseLong(opts.getOrDefault("invisible", "20")));

        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration conf = ClientConfiguration.newBuilder()
            .setEndpoints(args[1])
            .enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10))
            .build();
        FilterExpression filter = new FilterExpression(args[4], FilterExpressionType.TAG);
        Map<String, FilterExpression> subscription = Collections.singletonMap(args[2], filter);

        int exit = 0;
        if (mode.equals("simple")) {
            SimpleConsumer consumer = provider.newSimpleConsumerBuilder()
                .setClientConfiguration(conf)
                .setConsumerGroup(args[3])
                .setAwaitDuration(Duration.ofSeconds(5))
                .setSubscriptionExpressions(subscription)
                .build();
            try {
                while (!done(max, idleMs, stopFile, rounds)) {
                    int want = max > 0 ? Math.max(1, Math.min(batch, max - ACKED.get())) : batch;
                    List<MessageView> got = consumer.receive(want, invisible);
                    for (MessageView m : got) {
                        LAST.set(System.currentTimeMillis());
                        recv(m);
                        if (noack != null && m.getKeys().contains(noack)) {
                            noack(m);
                            continue;
                        }
                        if (max > 0 && ACKED.get() >= max) {
                            // Over the limit: left unacknowledged (it comes back after its
                            // invisible time, to this group's next consumer).
                            noack(m);
                            continue;
                        }
                        consumer.ack(m);
                        ack(m);
                    }
                }
            } catch (Throwable t) {
                System.out.println("ERROR " + t);
                t.printStackTrace();
                exit = 1;
            } finally {
                consumer.close();
            }
        } else if (mode.equals("push")) {
            PushConsumer consumer = provider.newPushConsumerBuilder()
                .setClientConfiguration(conf)
                .setConsumerGroup(args[3])
                .setSubscriptionExpressions(subscription)
                .setConsumptionThreadCount(1)
                .setMaxCacheMessageCount(batch)
                .setMessageListener(m -> {
                    LAST.set(System.currentTimeMillis());
                    recv(m);
                    if (noack != null && m.getKeys().contains(noack)) {
                        noack(m);
                        return ConsumeResult.FAILURE;
                    }
                    if (max > 0 && ACKED.get() >= max) {
                        noack(m);
                        return ConsumeResult.FAILURE;
                    }
                    ack(m);
                    return ConsumeResult.SUCCESS;
                })
                .build();
            try {
                while (!done(max, idleMs, stopFile, rounds)) {
                    Thread.sleep(100);
                }
            } finally {
                consumer.close();
            }
        } else {
            System.err.println("mode must be simple or push: " + mode);
            System.exit(2);
        }
        synchronized (PRINT) {
            System.out.println("DONE " + RECEIVED.get() + " " + ACKED.get());
            System.out.flush();
        }
        System.exit(exit);
    }

    private static boolean done(int max, long idleMs, File stopFile, int rounds) {
        if (stopFile != null && stopFile.exists()) {
            return true;
        }
        if (max > 0 && ACKED.get() >= max) {
            return true;
        }
        if (rounds > 0 && NOACKED.get() >= rounds) {
            return true;
        }
        long quiet = RECEIVED.get() == 0 ? Math.max(idleMs, 20000L) : idleMs;
        return System.currentTimeMillis() - LAST.get() >= quiet;
    }

    /**
     * "brokerName queueId queueOffset topicType" of the stored message this delivery came from, read
     * from the receipt handle (the broker's pop checkpoint info: startOffset retrieveTime
     * invisibleTime reviveQueueId topicType brokerName queueId offset commitLogOffset). topicType
     * 0 = the topic itself, 1/2 = the group's POP retry topic (v1 %RETRY%group_topic, v2
     * %RETRY%group+topic): queueId/offset are then the retry topic's. The client's own
     * MessageQueue is not used: it is the queue the client asked, and a pop through the proxy
     * serves any queue of that broker.
     */
    private static String where(MessageView m) {
        String[] h = ((MessageViewImpl) m).getReceiptHandle().split(" ");
        if (h.length < 9) {
            return "? -1 -1 ?";
        }
        return h[5] + " " + h[6] + " " + h[7] + " " + h[4];
    }

    private static void recv(MessageView m) {
        RECEIVED.incrementAndGet();
        String keys = m.getKeys().isEmpty() ? "-" : String.join(",", m.getKeys());
        line("RECV " + where(m) + " " + m.getTag().orElse("-") + " " + m.getDeliveryAttempt() + " "
            + m.getMessageId() + " " + keys);
    }

    private static void ack(MessageView m) {
        ACKED.incrementAndGet();
        line("ACK " + where(m) + " " + m.getMessageId());
    }

    private static void noack(MessageView m) {
        NOACKED.incrementAndGet();
        line("NOACK " + where(m) + " " + m.getDeliveryAttempt() + " " + m.getMessageId());
    }

    private static void line(String s) {
        synchronized (PRINT) {
            System.out.println(s);
            System.out.flush();
        }
    }
}
