// pixel_format_conversion.cpp: format names and layouts from libavutil's descriptors; conversion by libswscale.
#include "pixel_format_conversion.h"

extern "C" {
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <stdexcept>

namespace fuseproof::e2e {
namespace {

const AVPixelFormat kPlanar8[] = {AV_PIX_FMT_GRAY8,    AV_PIX_FMT_YUV420P,  AV_PIX_FMT_YUV422P,  AV_PIX_FMT_YUV444P,
                                  AV_PIX_FMT_YUV440P,  AV_PIX_FMT_YUV411P,  AV_PIX_FMT_YUV410P,  AV_PIX_FMT_YUVJ420P,
                                  AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P, AV_PIX_FMT_YUVJ411P,
                                  AV_PIX_FMT_GBRP};

AVPixelFormat format_of(const std::string& name) {
  const AVPixelFormat f = av_get_pix_fmt(name.c_str());
  if (f == AV_PIX_FMT_NONE) throw std::invalid_argument("pixel format must be one FFmpeg knows, got '" + name + "'");
  return f;
}

bool is_planar8(AVPixelFormat f) {
  for (AVPixelFormat p : kPlanar8) {
    if (p == f) return true;
  }
  return false;
}

bool full_range(const std::string& name) { return name.rfind("yuvj", 0) == 0; }

}  // namespace

PlanarVideo planar_layout(const std::string& pix_fmt, int width, int height) {
  const AVPixelFormat f = format_of(pix_fmt);
  if (!is_planar8(f)) {
    throw std::invalid_argument("pixel format must be 8-bit planar gray, yuv or gbrp for the metrics, got " + pix_fmt);
  }
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(f);
  PlanarVideo v;
  v.pixel_format = pix_fmt;
  v.width = width;
  v.height = height;
  v.planes = d->nb_components >= 3 ? 3 : 1;
  v.log2_chroma_w = d->log2_chroma_w;
  v.log2_chroma_h = d->log2_chroma_h;
  v.rgb = (d->flags & AV_PIX_FMT_FLAG_RGB) != 0;
  return v;
}

std::string metrics_format_for(const std::string& decoded) {
  const AVPixelFormat f = format_of(decoded);
  if (is_planar8(f)) return decoded;
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(f);
  for (int i = 0; i < d->nb_components; ++i) {
    if (d->comp[i].depth != 8) {
      throw std::invalid_argument("pixel format must have 8 bits per component for the metrics, got " + decoded);
    }
  }
  if (d->flags & AV_PIX_FMT_FLAG_RGB) return "gbrp";
  if (d->nb_components <= 2) return "gray";
  const int w = d->log2_chroma_w, h = d->log2_chroma_h;
  if (w == 0 && h == 0) return "yuv444p";
  if (w == 1 && h == 0) return "yuv422p";
  if (w == 1 && h == 1) return "yuv420p";
  if (w == 0 && h == 1) return "yuv440p";
  if (w == 2 && h == 0) return "yuv411p";
  if (w == 2 && h == 2) return "yuv410p";
  throw std::invalid_argument("pixel format has no planar 8-bit equivalent for the metrics, got " + decoded);
}

std::string common_format(const std::string& baseline, const std::string& candidate) {
  if (baseline == candidate) return baseline;
  const PlanarVideo a = planar_layout(baseline, 16, 16), b = planar_layout(candidate, 16, 16);
  const bool yuv = !a.rgb && !b.rgb && a.planes == 3 && b.planes == 3;
  if (yuv && full_range(baseline) == full_range(candidate)) {
    const bool a_finer = a.log2_chroma_w <= b.log2_chroma_w && a.log2_chroma_h <= b.log2_chroma_h;
    const bool b_finer = b.log2_chroma_w <= a.log2_chroma_w && b.log2_chroma_h <= a.log2_chroma_h;
    if (a_finer) return baseline;
    if (b_finer) return candidate;
    return full_range(baseline) ? "yuvj444p" : "yuv444p";
  }
  return baseline;
}

PlanarVideo convert_planar(const PlanarVideo& v, const std::string& pix_fmt) {
  PlanarVideo out = planar_layout(pix_fmt, v.width, v.height);
  out.count = v.count;
  out.data.resize(out.frame_bytes() * static_cast<size_t>(v.count));
  const int flags = SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;
  std::unique_ptr<SwsContext, void (*)(SwsContext*)> sws(
      sws_getContext(v.width, v.height, format_of(v.pixel_format), v.width, v.height, format_of(pix_fmt), flags,
                     nullptr, nullptr, nullptr),
      &sws_freeContext);
  if (!sws) throw std::invalid_argument("swscale cannot convert " + v.pixel_format + " to " + pix_fmt);
  for (int f = 0; f < v.count; ++f) {
    const uint8_t* src[4] = {nullptr, nullptr, nullptr, nullptr};
    int src_stride[4] = {0, 0, 0, 0};
    uint8_t* dst[4] = {nullptr, nullptr, nullptr, nullptr};
    int dst_stride[4] = {0, 0, 0, 0};
    for (int p = 0; p < v.planes; ++p) {
      src[p] = v.plane(f, p);
      src_stride[p] = v.plane_width(p);
    }
    for (int p = 0; p < out.planes; ++p) {
      dst[p] = out.plane(f, p);
      dst_stride[p] = out.plane_width(p);
    }
    if (sws_scale(sws.get(), src, src_stride, 0, v.height, dst, dst_stride) != v.height) {
      throw std::invalid_argument("swscale failed converting frame " + std::to_string(f) + " from " + v.pixel_format +
                                  " to " + pix_fmt);
    }
  }
  return out;
}

}  // namespace fuseproof::e2e
