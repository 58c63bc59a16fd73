"""A Wasm autoscaler plugin the tests assemble themselves from WebAssembly text (wasmtime's wat2wasm).

Built against the Extism kernel imports. `scale` reads the FleetAutoscaleReview it is given, finds
`"allocatedReplicas":`, parses the number after it and answers
`{"response":{"scale":true,"replicas":<allocated + buffer>}}`; it fails (returns 1) when the number
is absent. `scaleNone` answers `{"response":{"scale":false}}`.
"""

from __future__ import annotations

NEEDLE = b'"allocatedReplicas":'
PREFIX = b'{"response":{"scale":true,"replicas":'
NONE = b'{"response":{"scale":false}}'


def _data(offset: int, data: bytes) -> str:
    escaped = "".join(f"\\{b:02x}" for b in data)
    return f'(data (i32.const {offset}) "{escaped}")'


def plugin_wat(buffer: int) -> str:
    return f"""
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 2)
  {_data(0, NEEDLE)}
  {_data(64, PREFIX)}
  {_data(160, NONE)}
  (func $emit (param $ptr i32) (param $len i32)
    (local $mem i64) (local $i i32)
    (local.set $mem (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (local.get $len)))
      (call $store_u8 (i64.add (local.get $mem) (i64.extend_i32_u (local.get $i)))
                      (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (call $output_set (local.get $mem) (i64.extend_i32_u (local.get $len))))
  (func $load_input (result i32)
    (local $n i32) (local $i i32)
    (local.set $n (i32.wrap_i64 (call $input_length)))
    (if (i32.gt_u (local.get $n) (i32.const 120000)) (then (return (i32.const 0))))
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (local.get $n)))
      (i32.store8 (i32.add (i32.const 4096) (local.get $i))
                  (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.get $n))
  (func $find (param $n i32) (result i32)
    (local $i i32) (local $j i32)
    (block $notfound (loop $outer
      (br_if $notfound (i32.gt_u (i32.add (local.get $i) (i32.const {len(NEEDLE)})) (local.get $n)))
      (local.set $j (i32.const 0))
      (block $mismatch (loop $inner
        (if (i32.eq (local.get $j) (i32.const {len(NEEDLE)}))
          (then (return (i32.add (local.get $i) (i32.const {len(NEEDLE)})))))
        (br_if $mismatch
          (i32.ne (i32.load8_u (i32.add (i32.const 4096) (i32.add (local.get $i) (local.get $j))))
                  (i32.load8_u (local.get $j))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $inner)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $outer)))
    (i32.const -1))
  (func $parse (param $pos i32) (param $n i32) (result i64)
    (local $v i64) (local $c i32)
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $pos) (local.get $n)))
      (local.set $c (i32.load8_u (i32.add (i32.const 4096) (local.get $pos))))
      (br_if $d (i32.lt_u (local.get $c) (i32.const 48)))
      (br_if $d (i32.gt_u (local.get $c) (i32.const 57)))
      (local.set $v (i64.add (i64.mul (local.get $v) (i64.const 10))
                             (i64.extend_i32_u (i32.sub (local.get $c) (i32.const 48)))))
      (local.set $pos (i32.add (local.get $pos) (i32.const 1)))
      (br $l)))
    (local.get $v))
  (func (export "scale") (result i32)
    (local $n i32) (local $pos i32) (local $v i64) (local $len i32) (local $t i32)
    (local.set $n (call $load_input))
    (local.set $pos (call $find (local.get $n)))
    (if (i32.lt_s (local.get $pos) (i32.const 0)) (then (return (i32.const 1))))
    (local.set $v (i64.add (call $parse (local.get $pos) (local.get $n)) (i64.const {buffer})))
    (memory.copy (i32.const 512) (i32.const 64) (i32.const {len(PREFIX)}))
    (local.set $len (i32.const {len(PREFIX)}))
    (local.set $t (i32.const 480))
    (loop $dig
      (local.set $t (i32.sub (local.get $t) (i32.const 1)))
      (i32.store8 (local.get $t)
                  (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $v) (i64.const 10)))))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $dig (i64.ne (local.get $v) (i64.const 0))))
    (memory.copy (i32.add (i32.const 512) (local.get $len)) (local.get $t)
                 (i32.sub (i32.const 480) (local.get $t)))
    (local.set $len (i32.add (local.get $len) (i32.sub (i32.const 480) (local.get $t))))
    (i32.store8 (i32.add (i32.const 512) (local.get $len)) (i32.const 125))
    (i32.store8 (i32.add (i32.const 513) (local.get $len)) (i32.const 125))
    (call $emit (i32.const 512) (i32.add (local.get $len) (i32.const 2)))
    (i32.const 0))
  (func (export "scaleNone") (result i32)
    (call $emit (i32.const 160) (i32.const {len(NONE)}))
    (i32.const 0)))
"""


def build_plugin(buffer: int = 5) -> bytes:
    import wasmtime

    return bytes(wasmtime.wat2wasm(plugin_wat(buffer)))
