/*
 * nvtx_iface.h: the part of the NVTX tool-injection interface feedtrace
 * uses, declared from its documented facts (NVTX v3 headers, nvtxDetail/
 * nvtxTypes.h and nvtxInit.h; libnvToolsExt v2 loads tools the same way),
 * so that neither the library nor our test loader needs the CUDA toolkit.
 *
 * The load sequence: the NVTX loader reads NVTX_INJECTION64_PATH, dlopens
 * that library, looks up its export "InitializeInjectionNvtx2" and calls
 * it with a function that hands out export tables by id. The tool asks for
 * the callbacks table, asks it for a module's function table (an array of
 * pointers to the loader's function-pointer slots, indexed by callback id;
 * out_size = number of entries, entry 0 unused) and stores its own
 * functions into the slots it implements. A non-zero return means the tool
 * attached; zero makes the loader turn every NVTX call into a no-op.
 */
#ifndef FT_NVTX_IFACE_H
#define FT_NVTX_IFACE_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* export table ids */
enum { FT_NVTX_ETID_CALLBACKS = 1, FT_NVTX_ETID_VERSIONINFO = 3 };

/* callback modules */
enum { FT_NVTX_CB_MODULE_CORE = 1, FT_NVTX_CB_MODULE_CORE2 = 5 };

/* callback ids of the core module (nvtxMarkEx, nvtxRangePushA, ...) */
enum {
	FT_NVTX_CBID_CORE_MarkEx = 1,
	FT_NVTX_CBID_CORE_MarkA = 2,
	FT_NVTX_CBID_CORE_MarkW = 3,
	FT_NVTX_CBID_CORE_RangeStartEx = 4,
	FT_NVTX_CBID_CORE_RangeStartA = 5,
	FT_NVTX_CBID_CORE_RangeStartW = 6,
	FT_NVTX_CBID_CORE_RangeEnd = 7,
	FT_NVTX_CBID_CORE_RangePushEx = 8,
	FT_NVTX_CBID_CORE_RangePushA = 9,
	FT_NVTX_CBID_CORE_RangePushW = 10,
	FT_NVTX_CBID_CORE_RangePop = 11,
	FT_NVTX_CBID_CORE_SIZE = 16,      /* one past the last id */
};

/* callback ids of the domain module (nvtxDomainRangePushEx, ...: what the
 * nvtx3 C++ API calls) */
enum {
	FT_NVTX_CBID_CORE2_DomainMarkEx = 1,
	FT_NVTX_CBID_CORE2_DomainRangeStartEx = 2,
	FT_NVTX_CBID_CORE2_DomainRangeEnd = 3,
	FT_NVTX_CBID_CORE2_DomainRangePushEx = 4,
	FT_NVTX_CBID_CORE2_DomainRangePop = 5,
	FT_NVTX_CBID_CORE2_DomainRegisterStringA = 10,
	FT_NVTX_CBID_CORE2_DomainRegisterStringW = 11,
	FT_NVTX_CBID_CORE2_SIZE = 16,
};

typedef void (*ft_nvtx_fn)(void);           /* a slot's type: cast before calling */
typedef ft_nvtx_fn **ft_nvtx_table;         /* array of pointers to slots */

struct ft_nvtx_callbacks {                  /* export table FT_NVTX_ETID_CALLBACKS */
	size_t struct_size;
	int (*GetModuleFunctionTable)(int module, ft_nvtx_table *out_table,
				      unsigned *out_size);
};

struct ft_nvtx_versioninfo {                /* export table FT_NVTX_ETID_VERSIONINFO */
	size_t struct_size;
	uint32_t version;                   /* the application's NVTX API version */
	uint32_t reserved0;
	void (*SetInjectionNvtxVersion)(uint32_t version);
};

typedef const void *(*ft_nvtx_get_export_table)(uint32_t export_table_id);

/* message types of an event attribute structure */
enum { FT_NVTX_MESSAGE_UNKNOWN = 0, FT_NVTX_MESSAGE_ASCII = 1,
       FT_NVTX_MESSAGE_UNICODE = 2, FT_NVTX_MESSAGE_REGISTERED = 3 };

/* nvtxEventAttributes_t (version 2 and 3: 48 bytes on LP64) */
struct ft_nvtx_attr {
	uint16_t version;
	uint16_t size;                      /* sizeof the structure as the caller knew it */
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type;
	int32_t reserved0;
	uint64_t payload;
	int32_t message_type;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered;     /* a handle from DomainRegisterString */
	} message;
};

typedef uint64_t ft_nvtx_range_id;
typedef void *ft_nvtx_domain;

/* what nvtxRangePush* returns when the tool does not track levels */
#define FT_NVTX_NO_PUSH_POP_TRACKING (-2)

#endif
