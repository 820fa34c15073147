/* Field numbers and enums of onnx.proto that hfx writes (ONNX IR 8–10). */
#ifndef HFX_FMT_ONNX_PROTO_H
#define HFX_FMT_ONNX_PROTO_H

enum { /* ModelProto */
    MODEL_IR_VERSION = 1, MODEL_PRODUCER_NAME = 2, MODEL_PRODUCER_VERSION = 3,
    MODEL_GRAPH = 7, MODEL_OPSET_IMPORT = 8, MODEL_METADATA_PROPS = 14
};
enum { OPSET_DOMAIN = 1, OPSET_VERSION = 2 };
enum { ENTRY_KEY = 1, ENTRY_VALUE = 2 }; /* StringStringEntryProto */
enum { /* GraphProto */
    GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12
};
enum { NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP_TYPE = 4, NODE_ATTRIBUTE = 5, NODE_DOMAIN = 7 };
enum { /* AttributeProto */
    ATTR_NAME = 1, ATTR_F = 2, ATTR_I = 3, ATTR_INTS = 8, ATTR_TYPE = 20
};
enum { ATTR_TYPE_FLOAT = 1, ATTR_TYPE_INT = 2, ATTR_TYPE_INTS = 7 };
enum { VALUE_INFO_NAME = 1, VALUE_INFO_TYPE = 2 };
enum { TYPE_TENSOR = 1 };                 /* TypeProto.tensor_type */
enum { TENSOR_TYPE_ELEM = 1, TENSOR_TYPE_SHAPE = 2 };
enum { SHAPE_DIM = 1 };                   /* TensorShapeProto.dim */
enum { DIM_VALUE = 1, DIM_PARAM = 2 };
enum { /* TensorProto */
    TENSOR_DIMS = 1, TENSOR_DATA_TYPE = 2, TENSOR_NAME = 8, TENSOR_RAW_DATA = 9,
    TENSOR_EXTERNAL_DATA = 13, TENSOR_DATA_LOCATION = 14
};
enum { DATA_LOCATION_EXTERNAL = 1 };
enum { /* TensorProto.DataType */
    ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_INT16 = 5, ONNX_INT32 = 6,
    ONNX_INT64 = 7, ONNX_BOOL = 9, ONNX_FLOAT16 = 10, ONNX_DOUBLE = 11, ONNX_BFLOAT16 = 16,
    ONNX_UINT4 = 21, ONNX_INT4 = 22
};

#endif
