"""Scenarios of Debian's python3-kubernetes (the official Python client) against logplane.

Run by test/e2e/python-client.test.ts as `/usr/bin/python3 python-client.py SCENARIO`
with LOGPLANE_URL, LOGPLANE_TOKEN and LOGPLANE_NAMESPACE set. Each scenario talks to the
apiserver only through the client's own API classes and `watch.Watch`, and prints one JSON
object per line (what it saw), which the test asserts on. Any unexpected exception ends it
with a traceback and a non-zero exit code.
"""
import json
import os
import sys
import threading
import time

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

NAMESPACE = os.environ["LOGPLANE_NAMESPACE"]


def core_api():
    configuration = client.Configuration()
    configuration.host = os.environ["LOGPLANE_URL"]
    configuration.api_key = {"authorization": os.environ["LOGPLANE_TOKEN"]}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    client.Configuration.set_default(configuration)
    return client.CoreV1Api(client.ApiClient(configuration))


def emit(**fields):
    print(json.dumps(fields), flush=True)


def pod(name, labels=None, generate_name=None):
    metadata = client.V1ObjectMeta(labels=labels or {})
    if generate_name:
        metadata.generate_name = generate_name
    else:
        metadata.name = name
    return client.V1Pod(
        metadata=metadata,
        spec=client.V1PodSpec(containers=[client.V1Container(name="main", image="busybox:1.36")]),
    )


def event_fields(event):
    obj = event["object"]
    return {"type": event["type"], "name": obj.metadata.name, "resourceVersion": obj.metadata.resource_version,
            "labels": obj.metadata.labels or {}}


def create_list(v1):
    """Creates a namespace and pods (one by generateName), then lists them."""
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    created = v1.create_namespaced_pod(NAMESPACE, pod("first", {"app": "demo"}))
    emit(step="created", name=created.metadata.name, uid=created.metadata.uid,
         resourceVersion=created.metadata.resource_version)
    generated = v1.create_namespaced_pod(NAMESPACE, pod(None, generate_name="worker-"))
    emit(step="generated", name=generated.metadata.name, generateName=generated.metadata.generate_name)
    listed = v1.list_namespaced_pod(NAMESPACE)
    emit(step="listed", names=sorted(p.metadata.name for p in listed.items),
         resourceVersion=listed.metadata.resource_version)
    selected = v1.list_namespaced_pod(NAMESPACE, label_selector="app=demo")
    emit(step="selected", names=[p.metadata.name for p in selected.items])
    try:
        v1.create_namespaced_pod(NAMESPACE, pod("first"))
    except ApiException as error:
        emit(step="duplicate", status=error.status, reason=json.loads(error.body)["reason"])


def watch_live(v1):
    """Watches from a list's resourceVersion while this process creates, updates and deletes a pod."""
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    start = v1.list_namespaced_pod(NAMESPACE).metadata.resource_version
    seen = []
    done = threading.Event()

    def run():
        w = watch.Watch()
        for event in w.stream(v1.list_namespaced_pod, NAMESPACE, resource_version=start, timeout_seconds=60):
            seen.append(event_fields(event))
            emit(step="event", **event_fields(event))
            if event["type"] == "DELETED":
                w.stop()
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    v1.create_namespaced_pod(NAMESPACE, pod("live", {"phase": "one"}))
    v1.patch_namespaced_pod("live", NAMESPACE, {"metadata": {"labels": {"phase": "two"}}})
    v1.delete_namespaced_pod("live", NAMESPACE)
    if not done.wait(30):
        raise RuntimeError("the watch did not see the deletion within 30 s; saw %r" % seen)
    # Resume from the MODIFIED event's resourceVersion (what Watch keeps to resume): only the deletion follows.
    modified = next(e for e in seen if e["type"] == "MODIFIED")
    w = watch.Watch()
    for event in w.stream(v1.list_namespaced_pod, NAMESPACE, resource_version=modified["resourceVersion"], timeout_seconds=60):
        emit(step="resumed", **event_fields(event))
        if event["type"] == "DELETED":
            w.stop()


def too_old(v1):
    """Watches from a resourceVersion older than the watch window: the raw ERROR event, then what Watch raises."""
    stale = os.environ["LOGPLANE_STALE_RV"]
    raw = v1.list_namespaced_pod(NAMESPACE, watch=True, resource_version=stale, _preload_content=False)
    emit(step="raw", status=raw.status, lines=[json.loads(line) for line in raw.data.decode().splitlines() if line])
    for label, kwargs in (("without timeout", {}), ("with timeout", {"timeout_seconds": 30})):
        try:
            for event in watch.Watch().stream(v1.list_namespaced_pod, NAMESPACE, resource_version=stale, **kwargs):
                emit(step="unexpected-event", type=event["type"])
        except ApiException as error:
            emit(step="raised", variant=label, status=error.status, reason=error.reason)


def reflector(v1):
    """A list-then-watch loop as client-go's reflector runs it: re-lists after 410 and keeps a store."""
    stale = os.environ["LOGPLANE_STALE_RV"]
    store = {}
    resource_version = stale  # the informer's last synced position, now outside the watch window
    relists = 0
    stopped = False
    while not stopped:
        w = watch.Watch()
        try:
            for event in w.stream(v1.list_namespaced_pod, NAMESPACE, resource_version=resource_version,
                                  timeout_seconds=30, allow_watch_bookmarks=True):
                if event["type"] == "BOOKMARK":
                    continue
                obj = event["object"]
                resource_version = obj.metadata.resource_version
                if event["type"] == "DELETED":
                    store.pop(obj.metadata.name, None)
                else:
                    store[obj.metadata.name] = obj
                emit(step="event", type=event["type"], name=obj.metadata.name)
                if obj.metadata.name == "after-relist":
                    w.stop()
                    stopped = True
        except ApiException as error:
            if error.status != 410:
                raise
            listed = v1.list_namespaced_pod(NAMESPACE)
            store = {p.metadata.name: p for p in listed.items}
            resource_version = listed.metadata.resource_version
            relists += 1
            emit(step="relisted", status=error.status, names=sorted(store), resourceVersion=resource_version)
            # A change after the re-list reaches the store through the new watch.
            v1.create_namespaced_pod(NAMESPACE, pod("after-relist"))
    emit(step="store", relists=relists, names=sorted(store))


def timeout(v1):
    """A watch with timeoutSeconds and nothing to report ends cleanly after that time."""
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    start = v1.list_namespaced_pod(NAMESPACE).metadata.resource_version
    began = time.monotonic()
    events = list(watch.Watch().stream(v1.list_namespaced_pod, NAMESPACE, resource_version=start, timeout_seconds=2))
    emit(step="ended", events=len(events), seconds=time.monotonic() - began)


SCENARIOS = {"create-list": create_list, "watch-live": watch_live, "too-old": too_old, "reflector": reflector,
             "timeout": timeout}

if __name__ == "__main__":
    SCENARIOS[sys.argv[1]](core_api())
