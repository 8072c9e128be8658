// RFC 6902 JSON Patch (add, remove, replace, move, copy, test) over RFC 6901 pointers.
// applyPatch(doc, patch) returns a new document and leaves `doc` alone; it throws PatchError when an
// operation fails, so a patch applies whole or not at all.
"use strict";

class PatchError extends Error {}

function parsePointer(pointer) {
  if (pointer === "") return [];
  if (typeof pointer !== "string" || pointer[0] !== "/") throw new PatchError(`invalid pointer ${JSON.stringify(pointer)}`);
  return pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function arrayIndex(token, length, allowEnd) {
  if (token === "-" && allowEnd) return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`bad array index ${token}`);
  const index = Number(token);
  if (index > length || (index === length && !allowEnd)) throw new PatchError(`index ${token} out of range`);
  return index;
}

const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

// The container holding the pointer's target and the key in it (a number for arrays).
function locate(doc, tokens, forAdd) {
  let node = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    const token = tokens[i];
    if (Array.isArray(node)) node = node[arrayIndex(token, node.length, false)];
    else if (node !== null && typeof node === "object" && own(node, token)) node = node[token];
    else throw new PatchError(`no member ${token}`);
  }
  const last = tokens[tokens.length - 1];
  if (Array.isArray(node)) return { parent: node, key: arrayIndex(last, node.length, forAdd) };
  if (node === null || typeof node !== "object") throw new PatchError(`cannot index a ${typeof node}`);
  if (!forAdd && !own(node, last)) throw new PatchError(`no member ${last}`);
  return { parent: node, key: last };
}

function getValue(doc, tokens) {
  if (tokens.length === 0) return doc;
  const { parent, key } = locate(doc, tokens, false);
  return parent[key];
}

function addValue(doc, tokens, value) {
  if (tokens.length === 0) return value;
  const { parent, key } = locate(doc, tokens, true);
  if (Array.isArray(parent)) parent.splice(key, 0, value);
  else parent[key] = value;
  return doc;
}

function removeValue(doc, tokens) {
  if (tokens.length === 0) throw new PatchError("cannot remove the whole document");
  const { parent, key } = locate(doc, tokens, false);
  if (Array.isArray(parent)) parent.splice(key, 1);
  else delete parent[key];
  return doc;
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => own(b, k) && deepEqual(a[k], b[k]));
}

const clone = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

function applyOperation(doc, op) {
  const path = parsePointer(op.path);
  switch (op.op) {
    case "add": return addValue(doc, path, clone(op.value));
    case "remove": return removeValue(doc, path);
    case "replace": {
      if (path.length === 0) return clone(op.value);
      const { parent, key } = locate(doc, path, false);
      parent[key] = clone(op.value);
      return doc;
    }
    case "move": {
      if (op.path.startsWith(op.from + "/")) throw new PatchError("cannot move a value into itself");
      const from = parsePointer(op.from);
      const value = getValue(doc, from);
      return addValue(removeValue(doc, from), path, value);
    }
    case "copy": return addValue(doc, path, clone(getValue(doc, parsePointer(op.from))));
    case "test":
      if (!deepEqual(getValue(doc, path), op.value)) throw new PatchError(`test failed at ${op.path}`);
      return doc;
    default: throw new PatchError(`unknown op ${op.op}`);
  }
}

function applyPatch(doc, patch) {
  let result = clone(doc);
  for (const op of patch) result = applyOperation(result, op);
  return result;
}

if (typeof module !== "undefined") module.exports = { applyPatch, PatchError, deepEqual };
