import Foundation

/// The analytics tables' migrations (as in the SQLite store, docs/analytics.md), listed in order
/// with the others in `PostgresStore.migrations`.
extension PostgresStore {
    /// Migration 3: projects, keys, collections, property paths, schema, events, uniqueness tokens.
    static let analyticsTables =
        """
        -- As in the SQLite store (docs/analytics.md). `version` goes up whenever a collection, a
        -- property path or a schema entry is added: an instance's copy of the dictionary is
        -- current while its version matches. A project's writers hold its row (FOR UPDATE), so
        -- path numbers stay dense whichever instance adds them.
        CREATE TABLE analytics_projects (
            id bigserial PRIMARY KEY,
            public_id text NOT NULL UNIQUE,
            name text NOT NULL,
            created_at double precision NOT NULL,
            version bigint NOT NULL DEFAULT 0
        );
        CREATE TABLE analytics_keys (
            hash bytea PRIMARY KEY,
            project_id bigint NOT NULL REFERENCES analytics_projects (id),
            kind text NOT NULL,
            name text NOT NULL,
            is_active boolean NOT NULL DEFAULT true,
            permitted text NOT NULL DEFAULT '[]',
            options text NOT NULL DEFAULT '{}',
            hint text NOT NULL,
            created_at double precision NOT NULL
        );
        CREATE TABLE analytics_collections (
            id bigserial PRIMARY KEY,
            project_id bigint NOT NULL REFERENCES analytics_projects (id),
            name text NOT NULL,
            UNIQUE (project_id, name)
        );
        CREATE TABLE analytics_paths (
            project_id bigint NOT NULL,
            id int NOT NULL,
            path text NOT NULL,
            PRIMARY KEY (project_id, id),
            UNIQUE (project_id, path)
        );
        CREATE TABLE analytics_schema (
            collection_id bigint NOT NULL,
            path_id int NOT NULL,
            type text NOT NULL,
            PRIMARY KEY (collection_id, path_id, type)
        );
        CREATE SEQUENCE analytics_event_ids;
        -- A collection's time range is one range of the primary key.
        CREATE TABLE analytics_events (
            collection_id bigint NOT NULL,
            ts_us bigint NOT NULL,
            id bigint NOT NULL DEFAULT nextval('analytics_event_ids'),
            created_us bigint NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (collection_id, ts_us, id)
        );
        CREATE TABLE analytics_tokens (
            collection_id bigint NOT NULL,
            token text NOT NULL,
            created_us bigint NOT NULL,
            PRIMARY KEY (collection_id, token)
        );
        """
    /// Migration 8: saved and cached queries.
    static let analyticsSavedQueries =
        """
        -- As in the SQLite store: the definition as Keen keeps it, and for a cached query its
        -- last result and when it is next due (NULL: not cached). An instance takes a due
        -- query by moving its due time on (FOR UPDATE SKIP LOCKED), so one refreshes it.
        CREATE TABLE analytics_saved_queries (
            project_id bigint NOT NULL REFERENCES analytics_projects (id),
            name text NOT NULL,
            definition text NOT NULL,
            created_us bigint NOT NULL,
            modified_us bigint NOT NULL,
            result text,
            result_us bigint,
            due_us bigint,
            PRIMARY KEY (project_id, name)
        );
        CREATE INDEX analytics_saved_queries_due ON analytics_saved_queries (due_us) WHERE due_us IS NOT NULL;
        """
    /// Migration 9: cached datasets.
    static let analyticsDatasets =
        """
        -- As in the SQLite store: a dataset's definition and state, and one row per index value
        -- and bucket. An instance takes a due dataset as it takes a cached query.
        CREATE TABLE analytics_datasets (
            project_id bigint NOT NULL REFERENCES analytics_projects (id),
            name text NOT NULL,
            definition text NOT NULL,
            created_us bigint NOT NULL,
            modified_us bigint NOT NULL,
            status text NOT NULL,
            refreshed_us bigint,
            due_us bigint,
            error text,
            PRIMARY KEY (project_id, name)
        );
        CREATE INDEX analytics_datasets_due ON analytics_datasets (due_us);
        CREATE TABLE analytics_dataset_buckets (
            project_id bigint NOT NULL,
            dataset text NOT NULL,
            index_key text NOT NULL,
            start_us bigint NOT NULL,
            end_us bigint NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (project_id, dataset, index_key, start_us)
        );
        """
    /// Migration 11: what an instance's columns need to follow the events every instance writes.
    static let analyticsFollowedColumns =
        """
        -- A project's writers hold its row to the commit and take event ids from a sequence each
        -- number of which is taken when asked for (no cache per connection), so within a project
        -- ids commit in order: what one instance sees committed is every event up to some id.
        -- An instance's columns hold a collection up to an id and read what was committed after
        -- it by this index before each answer (docs/analytics.md, "Columns on PostgreSQL").
        ALTER SEQUENCE analytics_event_ids CACHE 1;
        CREATE INDEX analytics_events_by_id ON analytics_events (collection_id, id);
        -- Moved by each delete, in its transaction: columns read at another count are read again.
        ALTER TABLE analytics_collections ADD COLUMN deletions bigint NOT NULL DEFAULT 0;
        """
}
