#!/usr/bin/env bash
# Resolve the runtime classpath of Apache RocketMQ 5.3.3 (namesrv, broker, tools, client) from
# Maven Central into a cache directory, once. Idempotent: a marker file written after a complete
# copy makes later runs return immediately.
#
#   tests/compat/fetch-classpath.sh            # prints the lib directory on success
#   MQCTL_COMPAT_CACHE=/some/dir tests/compat/fetch-classpath.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="5.3.3"
cache_root="${MQCTL_COMPAT_CACHE:-$HOME/.cache/mqctl-compat}"
lib_dir="$cache_root/rocketmq-$version/lib"
marker="$lib_dir/.complete"

if [[ -f "$marker" ]]; then
    echo "$lib_dir"
    exit 0
fi

for tool in java mvn; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "fetch-classpath.sh: '$tool' not found on PATH; the compat tests need Java 17+ and Maven 3.8+" >&2
        exit 1
    fi
done

# Copy into a staging directory and rename it into place, so an interrupted download never
# leaves a half-filled lib directory that looks usable.
mkdir -p "$cache_root/rocketmq-$version"
staging="$(mktemp -d "$cache_root/rocketmq-$version/lib.partial.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
log="$staging.log"

if ! mvn -B -q -f "$here/pom.xml" \
        org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
        -DoutputDirectory="$staging" -DincludeScope=runtime >"$log" 2>&1; then
    echo "fetch-classpath.sh: Maven could not resolve the RocketMQ $version classpath; last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi

count="$(find "$staging" -maxdepth 1 -name '*.jar' | wc -l)"
for jar in rocketmq-broker rocketmq-namesrv rocketmq-tools rocketmq-client; do
    if [[ ! -f "$staging/$jar-$version.jar" ]]; then
        echo "fetch-classpath.sh: $jar-$version.jar missing after resolution ($count jars in $staging)" >&2
        exit 1
    fi
done

rm -rf "$lib_dir"
mv "$staging" "$lib_dir"
trap - EXIT
rm -f "$log"
echo "$count jars, rocketmq $version" >"$marker"
echo "$lib_dir"
