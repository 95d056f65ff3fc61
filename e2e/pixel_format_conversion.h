// pixel_format_conversion.h: the planar formats the metrics run on, and swscale conversions between them, stated in reports.
#pragma once

#include <string>

#include "planar_video.h"

namespace fuseproof::e2e {

/// How convert_planar converts, for reports: the swscale flags, and the same conversion as an FFmpeg filter.
inline constexpr const char* kConversionFlags = "bicubic+accurate_rnd+bitexact+full_chroma_int+full_chroma_inp";

/// An empty clip (layout only) of an 8-bit planar format (gray, yuv4xxp, yuvj4xxp, gbrp). Throws std::invalid_argument
/// naming the format otherwise.
PlanarVideo planar_layout(const std::string& pix_fmt, int width, int height);

/// The planar format the metrics use for frames decoded as `decoded`: itself when it is one planar_layout accepts;
/// gbrp for 8-bit RGB (rgb24, bgr24, rgba, ...: a repacking, alpha dropped); the planar YUV of the same chroma
/// subsampling for other 8-bit YUV (nv12 -> yuv420p, yuyv422 -> yuv422p). Throws std::invalid_argument for deeper formats.
std::string metrics_format_for(const std::string& decoded);

/// The format two clips are compared in when their metric formats differ: two YUV formats of one range give the one
/// with the finer chroma (yuv420p vs yuv444p -> yuv444p: chroma is upsampled, nothing is dropped); otherwise the
/// baseline's format.
std::string common_format(const std::string& baseline, const std::string& candidate);

/// Converts every frame to `pix_fmt` with swscale (kConversionFlags; BT.601 limited range where YUV meets RGB, as
/// FFmpeg's scale filter does for untagged frames). Throws std::invalid_argument.
PlanarVideo convert_planar(const PlanarVideo& v, const std::string& pix_fmt);

}  // namespace fuseproof::e2e
