package ticdc.tests;

import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.Map;

import org.apache.spark.sql.connector.catalog.BasicInMemoryTableCatalog;
import org.apache.spark.sql.connector.catalog.InMemoryRowLevelOperationTableCatalog;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** Spark's in-memory MERGE-capable test catalog, its tables shared by every session of
 * the JVM under one catalog name (Spark builds one catalog instance per session). */
public class SharedRowLevelCatalog extends InMemoryRowLevelOperationTableCatalog {
    private static final Map<String, Object[]> STATE = new HashMap<>();

    @Override
    public void initialize(String name, CaseInsensitiveStringMap options) {
        super.initialize(name, options);
        try {
            Field tables = BasicInMemoryTableCatalog.class.getDeclaredField("tables");
            Field namespaces = BasicInMemoryTableCatalog.class.getDeclaredField("namespaces");
            tables.setAccessible(true);
            namespaces.setAccessible(true);
            synchronized (STATE) {
                Object[] shared = STATE.get(name);
                if (shared == null) {
                    STATE.put(name, new Object[] {tables.get(this), namespaces.get(this)});
                } else {
                    tables.set(this, shared[0]);
                    namespaces.set(this, shared[1]);
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
