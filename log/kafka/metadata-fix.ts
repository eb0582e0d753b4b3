/**
 * A fix for kafkajs 2.2.4's metadata requests, applied when this adapter is loaded.
 *
 * kafkajs asks for the metadata of every topic in the Kafka cluster whenever it asks for
 * none in particular (an empty topic list is sent as null): when a new producer initializes
 * its idempotent producer id, and for `describeCluster` and `listTopics`. It then throws the
 * first partition error of the whole answer. So one leaderless partition of any topic, say
 * another application's topic with a single replica on a broker that just died, made every
 * new logplane producer fail with "There is no leader for this topic-partition" for as long
 * as that broker stayed down, although every partition of logplane's own topics had a leader
 * (seen on the 3-broker test cluster: after one broker was SIGKILLed, no append succeeded
 * for 90 s).
 *
 * The replacement parses such all-topics answers without throwing topic or partition errors
 * (kafkajs keeps them in the metadata, with the leader -1 Kafka reports). Requests naming
 * topics are unchanged: the producer and consumers name the topics they use, and still get
 * and retry those topics' errors.
 */
import { createRequire } from 'node:module';

/** A kafkajs response definition: `parse` throws the first error in the decoded answer. */
interface ResponseDefinition {
  decode(rawData: Buffer): Promise<unknown>;
  parse(data: unknown): Promise<unknown>;
}

/** kafkajs' Metadata request definition (`protocol/requests/metadata/index.js`). */
interface MetadataDefinition {
  protocol(options: { version: number }): (args: { topics?: readonly string[] }) => { request: unknown; response: ResponseDefinition };
}

/** The response definition for an all-topics request: the same decoding, no throw. */
export const lenientResponse = (response: ResponseDefinition): ResponseDefinition => ({
  decode: (rawData) => response.decode(rawData),
  parse: async (data) => data,
});

const require = createRequire(import.meta.url);

/**
 * Installs the fix on kafkajs 2.2.4 (the version it was written against and the last
 * release); any other version is left alone. Returns whether the fix is in place.
 */
export const fixKafkajsAllTopicsMetadata = (): boolean => {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== '2.2.4') return false;
  const metadata = require('kafkajs/src/protocol/requests/metadata/index.js') as MetadataDefinition;
  const original = metadata.protocol.bind(metadata);
  metadata.protocol = (options) => {
    const build = original(options);
    return (args) => {
      const built = build(args);
      return args.topics && args.topics.length > 0 ? built : { ...built, response: lenientResponse(built.response) };
    };
  };
  return true;
};

/** Whether the fix is installed (it is, once this module is loaded, on kafkajs 2.2.4). */
export const allTopicsMetadataFixed = fixKafkajsAllTopicsMetadata();
