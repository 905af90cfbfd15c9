/**
 * Who is calling, and what they may do. Credentials are API keys (`cq_…`, stored hashed in
 * Neo4j, managed with `chronoql keys`) or JWTs (HS256 or RS256, issuer and audience checked),
 * both sent as `Authorization: Bearer …`. Roles nest: a writer may read, an admin may write.
 */
import { createHash, randomBytes } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { importSPKI, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import { ApiKeyRepository, type ApiKeyRecord } from '../graph/apiKeyRepository.js';
import type { CypherRunner } from '../graph/database.js';

export enum Role {
  READER = 'reader',
  WRITER = 'writer',
  ADMIN = 'admin',
}

const RANK: Record<Role, number> = { [Role.READER]: 1, [Role.WRITER]: 2, [Role.ADMIN]: 3 };

export function parseRole(text: unknown): Role | null {
  return Object.values(Role).includes(text as Role) ? (text as Role) : null;
}

export interface Principal {
  /** The API key id, or the JWT subject. */
  subject: string;
  role: Role;
  via: 'api-key' | 'jwt';
  /** A token's expiry: an open subscription ends then. */
  expiresAt?: Date;
}

export interface JwtSettings {
  algorithm: 'HS256' | 'RS256';
  /** The HS256 shared secret, or the RS256 public key (SPKI PEM). */
  key: string;
  issuer: string;
  audience: string;
  /** The claim holding the role (reader, writer or admin). */
  roleClaim: string;
}

export interface AccessSettings {
  /** `public`: queries need no credential; `key`: every request needs one. */
  readAccess: 'public' | 'key';
  jwt: JwtSettings | null;
}

export function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
}

export function forbidden(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'FORBIDDEN', http: { status: 403 } } });
}

/** Throws UNAUTHENTICATED without a principal and FORBIDDEN when its role is below `role`. */
export function requireRole(principal: Principal | null, role: Role, what: string): void {
  if (!principal) throw unauthenticated(`${what} requires an API key or token with the ${role} role (Authorization: Bearer …)`);
  if (RANK[principal.role] < RANK[role]) throw forbidden(`${what} requires the ${role} role; this ${principal.via} has ${principal.role}`);
}

const API_KEY_PREFIX = 'cq_';
const API_KEY_SHAPE = /^cq_([a-z0-9]{10})_([A-Za-z0-9_-]{43})$/;

export function hashApiKey(token: string): string {
  // The secret is 256 random bits, so a fast hash is enough: nothing to guess from it.
  return createHash('sha256').update(token).digest('hex');
}

/** Creates and stores a key `cq_<id>_<secret>`; the token is returned once, only its hash is kept. */
export async function createApiKey(db: CypherRunner, name: string, role: Role): Promise<{ key: ApiKeyRecord; token: string }> {
  const id = randomBytes(10)
    .map((byte) => byte % 36)
    .reduce((text, digit) => text + digit.toString(36), '');
  const token = `${API_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
  return { key: await new ApiKeyRepository(db).create({ id, name, role, hash: hashApiKey(token) }), token };
}

/** How long a verified key is trusted without asking Neo4j again: a revocation takes effect within this. */
const KEY_CACHE_MS = 1_000;

export class Authenticator {
  private readonly keys: ApiKeyRepository;
  private readonly verifiedKeys = new LRUCache<string, Principal>({ max: 10_000, ttl: KEY_CACHE_MS });
  private jwtKey: Promise<Uint8Array | CryptoKey> | undefined;

  constructor(
    db: CypherRunner,
    readonly settings: AccessSettings,
  ) {
    this.keys = new ApiKeyRepository(db);
  }

  /**
   * The principal behind an `Authorization` header value (or a WebSocket connection
   * parameter): null when there is none, UNAUTHENTICATED when it is present but not valid.
   */
  async authenticate(authorization: unknown): Promise<Principal | null> {
    if (authorization === undefined || authorization === null || authorization === '') return null;
    const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!match) throw unauthenticated('the Authorization header must be "Bearer <API key or token>"');
    const token = match[1]!;
    return token.startsWith(API_KEY_PREFIX) ? this.verifyApiKey(token) : this.verifyJwt(token);
  }

  private async verifyApiKey(token: string): Promise<Principal> {
    if (!API_KEY_SHAPE.test(token)) throw unauthenticated('malformed API key');
    const hash = hashApiKey(token);
    const cached = this.verifiedKeys.get(hash);
    if (cached) return cached;
    const key = await this.keys.findActiveByHash(hash);
    const role = parseRole(key?.role);
    if (!key || !role) throw unauthenticated('unknown or revoked API key');
    const principal: Principal = { subject: key.id, role, via: 'api-key' };
    this.verifiedKeys.set(hash, principal);
    return principal;
  }

  private async verifyJwt(token: string): Promise<Principal> {
    const jwt = this.settings.jwt;
    if (!jwt) throw unauthenticated('this server accepts API keys only (no JWT issuer is configured)');
    this.jwtKey ??= jwt.algorithm === 'HS256' ? Promise.resolve(new TextEncoder().encode(jwt.key)) : importSPKI(jwt.key, 'RS256');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, await this.jwtKey, {
        algorithms: [jwt.algorithm],
        issuer: jwt.issuer,
        audience: jwt.audience,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (error) {
      throw unauthenticated(`invalid token: ${(error as Error).message}`);
    }
    // jose checks that "sub" is present, not what it is: an object would become "[object Object]" in the log.
    if (typeof payload.sub !== 'string' || payload.sub.trim() === '') throw unauthenticated('invalid token: the "sub" claim must be a non-empty string');
    const role = parseRole(payload[jwt.roleClaim]);
    if (!role) throw unauthenticated(`the token's "${jwt.roleClaim}" claim must be reader, writer or admin`);
    return { subject: payload.sub, role, via: 'jwt', expiresAt: new Date(Number(payload.exp) * 1000) };
  }
}
