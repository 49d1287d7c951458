extern "C" void wsp_kernel_out_proj_acc(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  uint16_t* const p_o = (uint16_t*)wsp_t[0]; const int64_t p_o_rs = wsp_s[0], p_o_cs = wsp_s[1];
  uint16_t* const p_wo = (uint16_t*)wsp_t[1]; const int64_t p_wo_rs = wsp_s[2], p_wo_cs = wsp_s[3];
  float* const p_h = (float*)wsp_t[2]; const int64_t p_h_rs = wsp_s[4], p_h_cs = wsp_s[5];
  // %0 = load
  float v0[8192]; wsp::load<64, 128, wsp::Plain<float>>(v0, p_h, p_h_rs, p_h_cs);
  float v_o[2048]; wsp::load<64, 32, wsp::F16>(v_o, p_o, p_o_rs, p_o_cs);
  float v_wo[4096]; wsp::load<32, 128, wsp::F16>(v_wo, p_wo, p_wo_rs, p_wo_cs);
  // %1 = matmul
  float v1[8192]; wsp::matmul<float, 64, 128, 32>(v_o, v_wo, v0, v1);
  // %2 = store
  wsp::store<64, 128, wsp::Plain<float>>(p_h, p_h_rs, p_h_cs, v1);
}
