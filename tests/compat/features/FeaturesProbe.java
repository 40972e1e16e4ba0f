// UpdateFeatures through Apache Kafka's Admin client, printing what kafka-features hides: the
// exception class, which the client picks from the response's error code (features_compat.py).
//
//   java -cp '<kafka>/libs/*' FeaturesProbe.java <bootstrap> <feature> <level> upgrade|safe|unsafe
//
// Prints "OK" or "<ExceptionSimpleName>: <message>"; exits 0 either way (2 on a usage error).

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;

public class FeaturesProbe {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: FeaturesProbe <bootstrap> <feature> <level> upgrade|safe|unsafe");
            System.exit(2);
        }
        FeatureUpdate.UpgradeType type = switch (args[3]) {
            case "upgrade" -> FeatureUpdate.UpgradeType.UPGRADE;
            case "safe" -> FeatureUpdate.UpgradeType.SAFE_DOWNGRADE;
            case "unsafe" -> FeatureUpdate.UpgradeType.UNSAFE_DOWNGRADE;
            default -> throw new IllegalArgumentException(args[3]);
        };
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(p)) {
            FeatureUpdate u = new FeatureUpdate(Short.parseShort(args[2]), type);
            try {
                admin.updateFeatures(Map.of(args[1], u), new UpdateFeaturesOptions()).all().get();
                System.out.println("OK");
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                System.out.println(c.getClass().getSimpleName() + ": " + c.getMessage());
            }
        }
    }
}
