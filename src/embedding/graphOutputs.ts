/**
 * Exposes tensors inside an ONNX graph (a middle layer's states) as extra graph outputs, so
 * onnxruntime returns them beside the model's own outputs in the same pass. onnxruntime can
 * only fetch graph outputs, and the models come as published files, so the outputs are added
 * to the bytes at load time.
 *
 * A protobuf parser merges a singular message field that occurs twice and appends repeated
 * fields, so appending `ModelProto { graph: GraphProto { output: [ValueInfoProto…] } }` to a
 * model adds the outputs and changes nothing else.
 */

/** ONNX's TensorProto.DataType.FLOAT. */
const FLOAT = 1;
const LENGTH_DELIMITED = 2;
const VARINT = 0;

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
}

function field(number: number, body: readonly number[]): number[] {
  return [...varint((number << 3) | LENGTH_DELIMITED), ...varint(body.length), ...body];
}

/** ValueInfoProto { name (1), type (2): TypeProto { tensor_type (1): Tensor { elem_type (1) } } }: a float tensor of any shape. */
function floatOutput(name: string): number[] {
  const tensorType = [...varint((1 << 3) | VARINT), ...varint(FLOAT)];
  return [...field(1, [...new TextEncoder().encode(name)]), ...field(2, field(1, tensorType))];
}

/** The model's bytes with the named float tensors added as graph outputs (ModelProto.graph = 7, GraphProto.output = 12). */
export function withGraphOutputs(model: Uint8Array, names: readonly string[]): Uint8Array {
  if (names.length === 0) return model;
  const graph = names.flatMap((name) => field(12, floatOutput(name)));
  const appended = field(7, graph);
  const out = new Uint8Array(model.length + appended.length);
  out.set(model);
  out.set(appended, model.length);
  return out;
}
