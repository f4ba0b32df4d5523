#!/usr/bin/env bash
# Resolve the runtime classpath of Apache RocketMQ (namesrv, broker, tools, client) from Maven
# Central into one cache directory per version, once. Idempotent: a marker file written after a
# complete copy makes later runs skip that version. For a 5.x version also the proxy
# (rocketmq-proxy, pom.xml's "proxy" profile, into proxy-lib/ beside lib/) and the gRPC client
# (rocketmq-client-java, grpc-client-pom.xml, one lib dir shared by every 5.x version), each with
# a marker of its own.
#
#   tests/compat/fetch-classpath.sh                 # every version of MQCTL_COMPAT_VERSIONS,
#                                                   # default 4.9.7,5.3.3,5.5.1 (tests/compat/versions.py)
#   tests/compat/fetch-classpath.sh 4.9.7 5.5.1     # just these
#   MQCTL_COMPAT_CACHE=/some/dir tests/compat/fetch-classpath.sh
#
# Prints each lib directory on success. A cell like 5.5.1 is a 5.5.1 broker line with the 5.5.0
# name server, mqadmin and client (pom.xml explains the pins).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${MQCTL_COMPAT_CACHE:-$HOME/.cache/mqctl-compat}"

versions=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
    read -r -a versions <<<"$(python3 "$here/versions.py" list)"
fi

# resolve POM DEST LABEL REQUIRED_JARS -- MAVEN_ARGS...
# Copy POM's runtime dependencies into DEST (through a staging dir renamed into place, so an
# interrupted download never leaves a half-filled dir that looks usable), check that the
# REQUIRED_JARS (space separated, without .jar) are there and that no rocketmq artifact came in
# two versions (a mediation accident), then write DEST/.complete.
resolve() {
    local pom="$1" dest="$2" label="$3" required="$4"
    shift 5
    if [[ -f "$dest/.complete" ]]; then
        echo "$dest"
        return 0
    fi
    mkdir -p "$(dirname "$dest")"
    local staging
    staging="$(mktemp -d "$dest.partial.XXXXXX")"
    # shellcheck disable=SC2064
    trap "rm -rf '$staging'" EXIT
    local log="$staging.log"
    if ! mvn -B -q -f "$pom" \
            org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
            -DoutputDirectory="$staging" -DincludeScope=runtime "$@" >"$log" 2>&1; then
        echo "fetch-classpath.sh: Maven could not resolve $label; last lines of $log:" >&2
        tail -n 30 "$log" >&2
        exit 1
    fi
    local count jar
    count="$(find "$staging" -maxdepth 1 -name '*.jar' | wc -l)"
    for jar in $required; do
        if [[ ! -f "$staging/$jar.jar" ]]; then
            echo "fetch-classpath.sh: $jar.jar missing after resolution of $label ($count jars in $staging)" >&2
            exit 1
        fi
    done
    # Two lines of one artifact on the classpath would be a mediation accident.
    local dups
    dups="$(find "$staging" -maxdepth 1 -name 'rocketmq-*.jar' -printf '%f\n' \
        | sed -E 's/-[0-9][0-9.]*\.jar$//' | sort | uniq -d)"
    if [[ -n "$dups" ]]; then
        echo "fetch-classpath.sh: more than one version of: $dups" >&2
        exit 1
    fi
    rm -rf "$dest"
    mv "$staging" "$dest"
    trap - EXIT
    rm -f "$log"
    echo "$count jars, $label" >"$dest/.complete"
    echo "$dest"
}

fetch_one() {
    local version="$1" lines broker_version tools_version proxy_version client_version
    lines="$(python3 "$here/versions.py" maven "$version")"
    read -r broker_version tools_version <<<"$lines"
    local pins=(-Drocketmq.version="$broker_version" -Drocketmq.tools.version="$tools_version")
    resolve "$here/pom.xml" "$cache_root/rocketmq-$version/lib" \
        "rocketmq $version (broker line $broker_version, tools line $tools_version)" \
        "rocketmq-broker-$broker_version rocketmq-store-$broker_version rocketmq-common-$broker_version
         rocketmq-remoting-$broker_version rocketmq-namesrv-$tools_version rocketmq-tools-$tools_version
         rocketmq-client-$tools_version" -- "${pins[@]}"
    # 4.x has no proxy and no gRPC clients.
    proxy_version="$(python3 "$here/versions.py" proxy "$version")" || return 0
    resolve "$here/pom.xml" "$cache_root/rocketmq-$version/proxy-lib" \
        "rocketmq-proxy $proxy_version for rocketmq $version (broker line $broker_version)" \
        "rocketmq-proxy-$proxy_version rocketmq-broker-$broker_version rocketmq-common-$broker_version
         rocketmq-remoting-$broker_version rocketmq-client-$tools_version" -- -Pproxy "${pins[@]}"
    client_version="$(python3 "$here/versions.py" grpc-client)"
    resolve "$here/grpc-client-pom.xml" "$cache_root/rocketmq-client-java-$client_version/lib" \
        "rocketmq-client-java $client_version" "rocketmq-client-java-$client_version" \
        -- -Dclient.java.version="$client_version"
}

for tool in java mvn python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "fetch-classpath.sh: '$tool' not found on PATH; the compat tests need Java 17+, Maven 3.8+ and Python 3" >&2
        exit 1
    fi
done

for version in "${versions[@]}"; do
    fetch_one "$version"
done
