// The Java AdminClient's view of a cluster, for tests/cluster: run as a single-file source program
// (java -cp "<kafka>/libs/*" DescribeCluster.java BOOTSTRAP), it prints one line
//   cluster_id=<id> controller=<node id> brokers=<id>@<host>:<port>,...
// from Admin.describeCluster() (DescribeCluster, or Metadata on old brokers) and exits 0, or
// prints the error and exits 1.
import java.util.Comparator;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.Node;

public class DescribeCluster {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        try (Admin admin = Admin.create(props)) {
            DescribeClusterResult r = admin.describeCluster();
            String brokers = r.nodes().get(15, TimeUnit.SECONDS).stream()
                    .sorted(Comparator.comparingInt(Node::id))
                    .map(n -> n.id() + "@" + n.host() + ":" + n.port())
                    .collect(Collectors.joining(","));
            Node controller = r.controller().get(15, TimeUnit.SECONDS);
            String id = r.clusterId().get(15, TimeUnit.SECONDS);
            System.out.println("cluster_id=" + id + " controller="
                    + (controller == null ? -1 : controller.id()) + " brokers=" + brokers);
        } catch (Exception e) {
            System.out.println("error: " + e);
            System.exit(1);
        }
    }
}
