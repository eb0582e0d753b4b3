/**
 * The DNS wire format at the server's edge, on `dns-packet`: what a received message is
 * (a query to answer, something to refuse, or garbage), and the reply's bytes within the
 * transport's size limit. Never throws on input: a message that does not decode gets
 * FORMERR when its header can be read, and is dropped when it cannot (as miekg/dns, which
 * CoreDNS serves with, does).
 */
import dnsPacket, { type Answer, type DecodedPacket, type Packet, type Question } from 'dns-packet';

/** The rcodes this server sends. */
export const Rcode = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
/** An rcode this server sends. */
export type Rcode = keyof typeof Rcode;

const HEADER_BYTES = 12;
/** The UDP payload size without EDNS (RFC 1035). */
export const CLASSIC_UDP_SIZE = 512;
/** The UDP payload size this server advertises and accepts at most (the DNS flag day 2020 value). */
export const EDNS_UDP_SIZE = 1232;
const OPCODE_QUERY = 0;

/** The OPT record of a reply: our UDP size, and the upper 8 bits of an extended rcode. */
const ednsOpt = (extendedRcode: number): Answer => ({
  type: 'OPT',
  name: '.',
  udpPayloadSize: EDNS_UDP_SIZE,
  extendedRcode,
  ednsVersion: 0,
  flags: 0,
  flag_do: false,
  options: [],
});

/** What a received message is. */
export type Inbound =
  /** Not worth a reply: too short for a header, or a response rather than a query. */
  | { readonly type: 'drop'; readonly reason: string }
  /** Answer with `reply`, which carries no records: FORMERR, NOTIMP, REFUSED, or BADVERS (rcode NOERROR, extended in its OPT). */
  | { readonly type: 'error'; readonly rcode: Rcode | 'BADVERS'; readonly reply: Buffer; readonly reason: string }
  | {
      readonly type: 'query';
      readonly packet: DecodedPacket;
      readonly question: Question;
      /** The client's EDNS UDP payload size (clamped to 512..1232), undefined without EDNS. */
      readonly ednsSize: number | undefined;
    };

/** A header-only reply to the message in `raw` (its id, opcode and RD bit) with `rcode`. */
const headerReply = (raw: Buffer, rcode: Rcode, question?: Question): Buffer => {
  const flags = raw.readUInt16BE(2);
  const opcode = (flags >> 11) & 0xf;
  const reply: Packet = {
    type: 'response',
    id: raw.readUInt16BE(0),
    flags: (opcode << 11) | (flags & dnsPacket.RECURSION_DESIRED) | Rcode[rcode],
    questions: question ? [question] : [],
  };
  return dnsPacket.encode(reply);
};

/** Reads one received message. */
export const readInbound = (raw: Buffer): Inbound => {
  if (raw.length < HEADER_BYTES) return { type: 'drop', reason: `${raw.length} bytes is shorter than a DNS header` };
  const flags = raw.readUInt16BE(2);
  if (flags & 0x8000) return { type: 'drop', reason: 'the message is a response, not a query' };
  let packet: DecodedPacket;
  try {
    packet = dnsPacket.decode(raw);
  } catch (error) {
    return { type: 'error', rcode: 'FORMERR', reply: headerReply(raw, 'FORMERR'), reason: `the message does not decode: ${(error as Error).message}` };
  }
  const questions = packet.questions ?? [];
  const opcode = (flags >> 11) & 0xf;
  if (opcode !== OPCODE_QUERY) return { type: 'error', rcode: 'NOTIMP', reply: headerReply(raw, 'NOTIMP'), reason: `opcode ${opcode} is not QUERY` };
  const question = questions[0];
  if (questions.length !== 1 || !question) {
    return { type: 'error', rcode: 'FORMERR', reply: headerReply(raw, 'FORMERR'), reason: `${questions.length} questions; a query has exactly one` };
  }
  if ((question.class ?? 'IN') !== 'IN') {
    return { type: 'error', rcode: 'REFUSED', reply: headerReply(raw, 'REFUSED', question), reason: `class ${question.class} is not IN` };
  }
  const opt = (packet.additionals ?? []).find((a): a is Extract<Answer, { type: 'OPT' }> => a.type === 'OPT');
  if (opt && opt.ednsVersion !== 0) {
    // RFC 6891 6.1.3: an EDNS version we do not speak gets BADVERS (16: 1 in the OPT's upper rcode bits), as CoreDNS answers.
    const reply = dnsPacket.encode({
      type: 'response',
      id: packet.id ?? 0,
      flags: (flags & dnsPacket.RECURSION_DESIRED) | Rcode.NOERROR,
      questions: [question],
      additionals: [ednsOpt(1)],
    });
    return { type: 'error', rcode: 'BADVERS', reply, reason: `EDNS version ${opt.ednsVersion} is not 0` };
  }
  const ednsSize = opt ? Math.min(Math.max(opt.udpPayloadSize, CLASSIC_UDP_SIZE), EDNS_UDP_SIZE) : undefined;
  return { type: 'query', packet, question, ednsSize };
};

/** The records of a reply to a query. */
export interface ReplyContent {
  readonly rcode: Rcode;
  readonly authoritative: boolean;
  readonly recursionAvailable: boolean;
  readonly answers: readonly Answer[];
  readonly authorities: readonly Answer[];
  readonly additionals: readonly Answer[];
}

/**
 * The reply's bytes. Over UDP (`maxBytes` set) a reply that does not fit is sent with the
 * TC bit and without records, so the client asks again over TCP.
 */
export const encodeReply = (query: Extract<Inbound, { type: 'query' }>, content: ReplyContent, maxBytes: number | undefined): Buffer => {
  const requestFlags = query.packet.flags ?? 0;
  const flags =
    (requestFlags & dnsPacket.RECURSION_DESIRED) |
    (requestFlags & dnsPacket.CHECKING_DISABLED) |
    (content.authoritative ? dnsPacket.AUTHORITATIVE_ANSWER : 0) |
    (content.recursionAvailable ? dnsPacket.RECURSION_AVAILABLE : 0) |
    Rcode[content.rcode];
  const opt: Answer[] = query.ednsSize === undefined ? [] : [ednsOpt(0)];
  const full: Packet = {
    type: 'response',
    id: query.packet.id ?? 0,
    flags,
    questions: [query.question],
    answers: [...content.answers],
    authorities: [...content.authorities],
    additionals: [...content.additionals, ...opt],
  };
  if (maxBytes === undefined || dnsPacket.encodingLength(full) <= maxBytes) return dnsPacket.encode(full);
  return dnsPacket.encode({ ...full, flags: flags | dnsPacket.TRUNCATED_RESPONSE, answers: [], authorities: [], additionals: opt });
};

/** A reply with `rcode` and no records (SERVFAIL when answering failed, REFUSED for names not ours). */
export const emptyReply = (query: Extract<Inbound, { type: 'query' }>, rcode: Rcode, recursionAvailable: boolean): Buffer =>
  encodeReply(query, { rcode, authoritative: false, recursionAvailable, answers: [], authorities: [], additionals: [] }, undefined);

/** The UDP size limit of a reply to `query`. */
export const udpLimit = (query: Extract<Inbound, { type: 'query' }>): number => query.ednsSize ?? CLASSIC_UDP_SIZE;
